import type http from "node:http";
import { v1, v2 } from "pipedrive";
import type { CrmClientConfig } from "../../config.js";
import { CRM_CALL_TIMEOUT_MS, timed, type CrmSession, type TokenGrant } from "./adapter.js";
import { bodyText, CrmApiError, crmMessage, retryAfterFrom } from "./errors.js";

// `crm_deals`: Pipedrive's API through its official client (`pipedrive`), v2 for records, fields,
// pipelines and stages, v1 for notes and the current user (v2 has neither). OAuth endpoints live
// on the configured base (`CRM_DEALS_AUTH_BASE`); the API of each company lives on the
// `api_domain` its token answer names. The client's HTTP (one axios instance per API object) is
// given the outbound guard's agent, the call time limit, no proxy, and answers that keep the
// HTTP status: the client's own error handler hands back only the body, which would turn a 401,
// 429 or 503 into the same error.

/** The part of an axios instance the client is wired through. */
interface HttpOf {
  defaults: Record<string, unknown>;
  interceptors: {
    response: {
      clear(): void;
      use(ok: (r: { data?: unknown }) => unknown, failed: (e: unknown) => unknown): number;
    };
  };
}

/** An axios failure as a CrmApiError: status, Pipedrive's message, its answer and a 429's wait. */
export function dealsError(err: unknown): CrmApiError {
  if (err instanceof CrmApiError) return err;
  const e = err as {
    response?: { status?: number; data?: unknown; headers?: unknown };
    message?: string;
  };
  const status = e?.response?.status;
  if (typeof status === "number") {
    const raw = e.response?.headers as { toJSON?: () => unknown } | Record<string, unknown> | undefined;
    const headers = (
      raw && typeof (raw as { toJSON?: unknown }).toJSON === "function"
        ? (raw as { toJSON: () => unknown }).toJSON()
        : (raw ?? {})
    ) as Record<string, string | undefined>;
    return new CrmApiError(
      status,
      crmMessage(e.response?.data, `HTTP ${status}`),
      bodyText(e.response?.data),
      status === 429 ? retryAfterFrom(headers) : null,
    );
  }
  return new CrmApiError(null, e?.message ?? String(err));
}

/** Points an API object of the client at the outbound guard's agent, with the status kept on errors. */
function wire<T extends object>(api: T, agent: http.Agent): T {
  const httpOf = (api as unknown as { axios: HttpOf }).axios;
  httpOf.defaults.httpAgent = agent;
  httpOf.defaults.httpsAgent = agent;
  httpOf.defaults.timeout = CRM_CALL_TIMEOUT_MS;
  httpOf.defaults.proxy = false;
  httpOf.defaults.maxRedirects = 0;
  httpOf.interceptors.response.clear();
  httpOf.interceptors.response.use(
    (r) => r.data,
    (e) => Promise.reject(dealsError(e)),
  );
  return api;
}

/** Runs one client call within the time limit; failures are CrmApiErrors. */
export async function dealsCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await timed(run());
  } catch (err) {
    throw dealsError(err);
  }
}

/** The API objects of one authorized session. */
export interface DealsApis {
  persons: v2.PersonsApi;
  organizations: v2.OrganizationsApi;
  deals: v2.DealsApi;
  personFields: v2.PersonFieldsApi;
  organizationFields: v2.OrganizationFieldsApi;
  dealFields: v2.DealFieldsApi;
  pipelines: v2.PipelinesApi;
  stages: v2.StagesApi;
  notes: v1.NotesApi;
  users: v1.UsersApi;
}

/** The client's API objects for a company's API domain and an access token. */
export function dealsApis(apiBase: string, accessToken: string, agent: http.Agent): DealsApis {
  const c2 = new v2.Configuration({ accessToken, basePath: `${apiBase}/api/v2` });
  const c1 = new v1.Configuration({ accessToken, basePath: `${apiBase}/api/v1` });
  return {
    persons: wire(new v2.PersonsApi(c2), agent),
    organizations: wire(new v2.OrganizationsApi(c2), agent),
    deals: wire(new v2.DealsApi(c2), agent),
    personFields: wire(new v2.PersonFieldsApi(c2), agent),
    organizationFields: wire(new v2.OrganizationFieldsApi(c2), agent),
    dealFields: wire(new v2.DealFieldsApi(c2), agent),
    pipelines: wire(new v2.PipelinesApi(c2), agent),
    stages: wire(new v2.StagesApi(c2), agent),
    notes: wire(new v1.NotesApi(c1), agent),
    users: wire(new v1.UsersApi(c1), agent),
  };
}

export function sessionApis(session: CrmSession): DealsApis {
  return dealsApis(session.apiBase, session.accessToken, session.agent);
}

/** The client's OAuth 2 helper on the configured OAuth base (its token endpoint is `<base>/oauth/token`). */
export function dealsOAuth(
  client: CrmClientConfig,
  redirectUri: string,
  agentFor?: (url: string) => http.Agent,
): v2.OAuth2Configuration {
  const oauth = new v2.OAuth2Configuration({
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    redirectUri,
    host: client.authBase,
  });
  return agentFor ? wire(oauth, agentFor(client.authBase)) : oauth;
}

/** The API domain a token answer names, as an origin (http(s) only); else the configured API base. */
function apiDomainOf(value: unknown, fallback: string): string {
  if (typeof value !== "string" || !value) return fallback;
  try {
    const url = new URL(value);
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("not http");
    return url.origin;
  } catch {
    throw new CrmApiError(null, `the CRM named an API domain that is not a URL: ${value.slice(0, 100)}`);
  }
}

/** A token answer as a grant. */
export function dealsGrant(tokens: v2.TokenResponse, fallbackApiBase: string): TokenGrant {
  if (!tokens?.access_token || !tokens.refresh_token) {
    throw new CrmApiError(null, "the CRM's token answer has no access or refresh token");
  }
  return {
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    expiresAt: new Date(Date.now() + (Number(tokens.expires_in) || 3600) * 1000),
    apiBase: apiDomainOf(tokens.api_domain, fallbackApiBase),
  };
}
