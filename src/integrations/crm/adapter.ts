import type http from "node:http";
import type { components } from "../../../generated/api.js";
import type { CrmClientConfig } from "../../config.js";
import type { CrmProviderId } from "../providers.js";
import { CrmApiError } from "./errors.js";
import type { CrmLead } from "./lead.js";
import type { CrmField, CrmFieldMapping } from "./mapping.js";

export type CrmMappingTestScope = components["schemas"]["CrmMappingTestScope"];
export type CrmEnvironment = components["schemas"]["CrmEnvironment"];

/** Tokens a CRM granted. */
export interface TokenGrant {
  accessToken: string;
  refreshToken: string;
  expiresAt: Date;
  /** Where this account's API lives (the configured base, or the instance / API domain the CRM named). */
  apiBase: string;
}

/** The CRM account an authorization belongs to. */
export interface ConnectedAccount {
  externalAccountId: string;
  displayName: string;
  metadata: Record<string, unknown>;
}

/** An authorized session with one CRM account. */
export interface CrmSession {
  accessToken: string;
  apiBase: string;
  agent: http.Agent;
  metadata: Record<string, unknown>;
}

/** What a write did: the document's push `result` (null when the CRM has none, or nothing was written). */
export interface WriteOutcome {
  result: Record<string, string> | null;
}

/** How deliveries of `crm_deals` create Deals (PATCH `dealSettings`). */
export interface DealSettings {
  createDeals: boolean;
  pipelineId: number | null;
  stageId: number | null;
}

/** One CRM behind its official client: OAuth, field lists, writes and the mapping dry run. */
export interface CrmAdapter {
  provider: CrmProviderId;
  /** Whether the CRM's authorization code flow takes PKCE (`code_challenge`, S256). */
  pkce: boolean;
  /** The field lists the adapter reads (cached by name). */
  fieldLists: readonly string[];
  authorizationUrl(
    client: CrmClientConfig,
    p: { state: string; redirectUri: string; codeChallenge?: string; environment: CrmEnvironment },
  ): string;
  exchangeCode(
    client: CrmClientConfig,
    agentFor: (url: string) => http.Agent,
    p: {
      code: string;
      redirectUri: string;
      codeVerifier?: string;
      environment: CrmEnvironment;
      /** Refuses (CrmApiError) an API base the CRM names that the outbound guard would not call. */
      checkApiBase: (url: string) => Promise<void>;
    },
  ): Promise<{ grant: TokenGrant; account: ConnectedAccount }>;
  refresh(
    client: CrmClientConfig,
    agentFor: (url: string) => http.Agent,
    p: {
      refreshToken: string;
      apiBase: string;
      metadata: Record<string, unknown>;
      checkApiBase: (url: string) => Promise<void>;
    },
  ): Promise<TokenGrant>;
  /** Revokes the authorization at the CRM (its refresh token, and with it the access tokens). */
  revoke(
    client: CrmClientConfig,
    agentFor: (url: string) => http.Agent,
    p: { refreshToken: string; apiBase: string; metadata: Record<string, unknown> },
  ): Promise<void>;
  loadFieldLists(session: CrmSession): Promise<Record<string, CrmField[]>>;
  write(
    session: CrmSession,
    lead: CrmLead,
    mapping: CrmFieldMapping,
    dealSettings: DealSettings | null,
    /** The CRM's field lists as last cached (types of mapped fields); absent when never loaded. */
    cachedLists?: Record<string, CrmField[]>,
  ): Promise<WriteOutcome>;
  dryRun(
    session: CrmSession,
    mapping: CrmFieldMapping,
    lists: Record<string, CrmField[]>,
  ): Promise<CrmMappingTestScope[]>;
}

/** Time limit of one CRM call; the official clients take no signal, so a call is abandoned after it. */
export const CRM_CALL_TIMEOUT_MS = 15_000;

/** Races a CRM call against the time limit (a CrmApiError without status when it runs out). */
export async function timed<T>(call: Promise<T>, ms = CRM_CALL_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CrmApiError(null, `timed out after ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
