/** One limit of the document's Limits table. */
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
  mcp: {
    name: "mcp",
    points: 60,
    durationSeconds: 60,
    per: "ip",
    label: "60 MCP requests per minute per IP",
  },
} satisfies Record<string, LimitRule>;

const EXPORT_PATHS = new Set([
  "POST /api/v1/leads/export",
  "POST /api/v1/lead-export-history/refresh",
  "POST /api/v1/lead-export-history/re-export",
  "POST /api/v1/lead-export-history/refresh-and-export",
]);

/**
 * The limits that apply to an operation (by method and path template), most specific last.
 * Keyed operations always count toward the general 600 per minute.
 */
export function limitsFor(method: string, pathTemplate: string, requiresKey: boolean): LimitRule[] {
  const id = `${method} ${pathTemplate}`;
  if (!requiresKey) {
    if (id === "POST /api/v1/purchase") return [LIMITS.purchase];
    if (id === "POST /api/v1/claim-key") return [LIMITS.claimKey];
    return [];
  }
  if (EXPORT_PATHS.has(id)) return [LIMITS.general, LIMITS.export];
  if (pathTemplate.startsWith("/api/v1/ai/")) return [LIMITS.general, LIMITS.ai];
  if (pathTemplate === "/api/v1/integrations/{provider}/connect") return [LIMITS.general, LIMITS.connect];
  if (pathTemplate.startsWith("/api/v1/integrations")) return [LIMITS.general, LIMITS.integration];
  return [LIMITS.general];
}
