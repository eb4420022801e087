import http from "node:http";
import https from "node:https";
import type { CrmClientConfig, CrmConfig } from "../../config.js";
import type { Db } from "../../db/database.js";
import { guardedLookup } from "../../outbound/destination.js";
import { OutboundRefusedError, type Outbound } from "../../outbound/index.js";
import type { CrmProviderId } from "../providers.js";
import { CrmApiError } from "./errors.js";
import { TokenCipher } from "./token-cipher.js";

/** What the CRM adapters work with: configuration, database, the outbound guard's agents. */
export interface CrmRuntime {
  db: Db;
  outbound: Outbound;
  config: CrmConfig;
  /** Base of the OAuth callback the CRMs redirect to (`PUBLIC_BASE_URL`). */
  publicBaseUrl: string;
  cipher: TokenCipher;
  /** The agent of a request to `url`: keep-alive, connecting through the outbound guard's lookup. */
  agentFor(url: string): http.Agent;
  /**
   * Refuses, as a CrmApiError, an API base a CRM names (instance URL, API domain) that the outbound
   * guard would not call: the agent's lookup is not consulted for an address literal.
   */
  checkApiBase(url: string): Promise<void>;
}

/** What a caller gives to get the runtime. */
export interface CrmDeps {
  db: Db;
  outbound: Outbound;
  config: { crm: CrmConfig; publicBaseUrl: string };
}

const runtimes = new WeakMap<CrmConfig, WeakMap<Outbound, CrmRuntime>>();

/**
 * The CRM runtime of a configuration and outbound guard (one per pair, so its agents are shared).
 * Every request to a CRM, through any official client, uses `agentFor`: the outbound guard's
 * connect-time address check applies to them as to webhooks (`OUTBOUND_ALLOW_PRIVATE` too).
 */
export function crmRuntime(deps: CrmDeps): CrmRuntime {
  let byOutbound = runtimes.get(deps.config.crm);
  if (!byOutbound) {
    byOutbound = new WeakMap();
    runtimes.set(deps.config.crm, byOutbound);
  }
  let runtime = byOutbound.get(deps.outbound);
  if (!runtime) {
    const lookup = guardedLookup(deps.outbound.policy);
    const options = { keepAlive: true, timeout: 4_000, maxSockets: 32, lookup };
    const agents = { http: new http.Agent(options), https: new https.Agent(options) };
    runtime = {
      db: deps.db,
      outbound: deps.outbound,
      config: deps.config.crm,
      publicBaseUrl: deps.config.publicBaseUrl,
      cipher: new TokenCipher(deps.config.crm.tokenKeys),
      agentFor: (url) => (url.startsWith("https:") ? agents.https : agents.http),
      checkApiBase: async (url) => {
        try {
          await deps.outbound.checkDestination(url);
        } catch (err) {
          if (err instanceof OutboundRefusedError) {
            throw new CrmApiError(
              null,
              `the CRM named an API address the service does not call (${err.reason})`,
            );
          }
          throw err;
        }
      },
    };
    byOutbound.set(deps.outbound, runtime);
  }
  return runtime;
}

/** The OAuth client of a CRM on this deployment; undefined when it is not configured. */
export function crmClient(config: CrmConfig, provider: CrmProviderId): CrmClientConfig | undefined {
  const client =
    provider === "crm_contacts" ? config.contacts : provider === "crm_leads" ? config.leads : config.deals;
  return client && config.tokenKeys.length > 0 ? client : undefined;
}

/** Where the CRMs send the browser back after consent. */
export function redirectUri(runtime: CrmRuntime): string {
  return `${runtime.publicBaseUrl}/api/v1/integrations/oauth/callback`;
}
