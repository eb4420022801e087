import type { OperationId } from "../http/contract.js";

/** One rate limit of the service (the limits are listed in openapi.yaml's operation descriptions). */
export interface LimitRule {
  /** Prefix of the counter keys; one Postgres-backed limiter per rule. */
  name: string;
  points: number;
  durationSeconds: number;
  /** What the counter is per. */
  per: "key" | "account" | "ip";
  /** Text of the 429 message. */
  label: string;
}

export const LIMITS = {
  general: {
    name: "general",
    points: 600,
    durationSeconds: 60,
    per: "key",
    label: "600 requests per minute per API key",
  },
  export: {
    name: "export",
    points: 5,
    durationSeconds: 60,
    per: "key",
    label: "5 export requests per minute per API key",
  },
  ai: {
    name: "ai",
    points: 5,
    durationSeconds: 60,
    per: "key",
    label: "5 AI requests per minute per API key",
  },
  integration: {
    name: "integration",
    points: 60,
    durationSeconds: 60,
    per: "account",
    label: "60 integration requests per minute per account",
  },
  connect: {
    name: "connect",
    points: 30,
    durationSeconds: 60,
    per: "account",
    label: "30 integration connects per minute per account",
  },
  purchase: {
    name: "purchase",
    points: 5,
    durationSeconds: 3600,
    per: "ip",
    label: "5 purchases per hour per IP",
  },
  claimKey: {
    name: "claim_key",
    points: 30,
    durationSeconds: 3600,
    per: "ip",
    label: "30 key claims per hour per IP",
  },
  aiPolling: {
    name: "ai_polling",
    points: 60,
    durationSeconds: 60,
    per: "key",
    label: "60 auto-refine requests per minute per API key",
  },
  signInLink: {
    name: "sign_in_link",
    points: 20,
    durationSeconds: 3600,
    per: "ip",
    label: "20 sign-in links per hour per IP",
  },
  signIn: {
    name: "sign_in",
    points: 30,
    durationSeconds: 3600,
    per: "ip",
    label: "30 sign-ins per hour per IP",
  },
  mcp: {
    name: "mcp",
    points: 60,
    durationSeconds: 60,
    per: "ip",
    label: "60 MCP requests per minute per IP",
  },
} satisfies Record<string, LimitRule>;

/** Operations limited to 5 per minute per key besides the general limit (exports). */
const EXPORT_OPERATIONS: ReadonlySet<OperationId> = new Set<OperationId>([
  "exportLeads",
  "triggerEmailSchedule",
  "refreshLeadExportHistory",
  "reExportLeadExportHistory",
  "refreshAndExportLeadExportHistory",
]);

/** AI operations: 5 per minute per key (`getKeywordStatus` counts only toward the general limit). */
const AI_OPERATIONS: ReadonlySet<OperationId> = new Set<OperationId>([
  "suggestCategories",
  "generateKeywords",
  "enableAutoRefine",
]);

/** Auto-refine's disable and status: 60 per minute per key (docs/ai.md, auto-refine). */
const AI_POLLING_OPERATIONS: ReadonlySet<OperationId> = new Set<OperationId>([
  "disableAutoRefine",
  "getAutoRefineStatus",
]);

/** Keyed integration operations: 60 per minute per account (connect: 30 per minute per account). */
const INTEGRATION_OPERATIONS: ReadonlySet<OperationId> = new Set<OperationId>([
  "listIntegrationProviders",
  "listIntegrations",
  "getIntegration",
  "createWebhookIntegration",
  "updateIntegration",
  "deleteIntegration",
  "listIntegrationDeliveries",
  "retryIntegrationDelivery",
  "testIntegration",
  "pushLeadToIntegration",
  "getIntegrationFieldMapping",
  "updateIntegrationFieldMapping",
  "resetIntegrationFieldMapping",
  "testIntegrationFieldMapping",
  "listDealsCrmPipelines",
  "getDealsCrmDealFields",
]);

/** Operations without a key limited per client IP. */
const PER_IP: Partial<Record<OperationId, LimitRule>> = {
  purchase: LIMITS.purchase,
  claimKey: LIMITS.claimKey,
  requestSignInLink: LIMITS.signInLink,
  signIn: LIMITS.signIn,
};

/**
 * The limits that apply to an operation, most specific last. Keyed operations always count toward
 * the general 600 per minute; operations without a key count only toward their per-IP limit.
 */
export function limitsFor(operationId: OperationId, requiresKey: boolean): LimitRule[] {
  if (!requiresKey) {
    const rule = PER_IP[operationId];
    return rule ? [rule] : [];
  }
  if (EXPORT_OPERATIONS.has(operationId)) return [LIMITS.general, LIMITS.export];
  if (AI_OPERATIONS.has(operationId)) return [LIMITS.general, LIMITS.ai];
  if (AI_POLLING_OPERATIONS.has(operationId)) return [LIMITS.general, LIMITS.aiPolling];
  if (operationId === "connectIntegration") return [LIMITS.general, LIMITS.connect];
  if (INTEGRATION_OPERATIONS.has(operationId)) return [LIMITS.general, LIMITS.integration];
  return [LIMITS.general];
}
