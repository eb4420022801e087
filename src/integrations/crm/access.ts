import type { CrmClientConfig } from "../../config.js";
import { recordOwnerNotice } from "../owner-notices.js";
import { providerById, type CrmProviderId } from "../providers.js";
import type { CrmAdapter, CrmSession } from "./adapter.js";
import { CrmApiError, CrmAuthorizationLostError } from "./errors.js";
import { findConnection, markNeedsAttention, storeTokens, type CrmConnection } from "./repository.js";
import { crmClient, type CrmRuntime } from "./runtime.js";
import { adapterFor } from "./adapters.js";

/** Tokens are renewed when they expire within this margin (before `tokenExpiresAt`). */
export const REFRESH_MARGIN_MS = 5 * 60_000;

/** A CRM integration ready to call: its adapter, client, connection and session. */
export interface OpenCrm {
  adapter: CrmAdapter;
  client: CrmClientConfig;
  connection: CrmConnection;
}

function needsRefresh(connection: CrmConnection, marginMs = REFRESH_MARGIN_MS): boolean {
  return connection.tokenExpiresAt === null || connection.tokenExpiresAt.getTime() - Date.now() < marginMs;
}

function sessionOf(runtime: CrmRuntime, connection: CrmConnection): CrmSession {
  return {
    accessToken: runtime.cipher.decrypt(connection.accessToken),
    apiBase: connection.apiBase,
    agent: runtime.agentFor(connection.apiBase),
    metadata: connection.metadata,
  };
}

/**
 * Runs `use` with a session of the integration: tokens that expire within 5 minutes are renewed
 * first, and an access token the CRM refuses (401) is renewed once and the call made again. A
 * refresh the CRM refuses moves the integration to `needs_attention`, tells the owner and throws
 * `CrmAuthorizationLostError`. Two processes never renew the same tokens at once (row lock).
 */
export async function withSession<T>(
  runtime: CrmRuntime,
  open: OpenCrm,
  use: (session: CrmSession) => Promise<T>,
): Promise<T> {
  let connection = open.connection;
  let refreshed = false;
  if (needsRefresh(connection)) {
    connection = await refresh(runtime, open, false);
    refreshed = true;
  }
  try {
    return await use(sessionOf(runtime, connection));
  } catch (err) {
    if (!(err instanceof CrmApiError) || err.statusCode !== 401 || refreshed) throw err;
    connection = await refresh(runtime, open, true);
    return use(sessionOf(runtime, connection));
  }
}

/**
 * Renews the integration's tokens when they expire within `marginMs` (the background refresh);
 * whether it renewed them. A refused refresh does what `withSession`'s does.
 */
export async function renewIfDue(runtime: CrmRuntime, open: OpenCrm, marginMs: number): Promise<boolean> {
  if (!needsRefresh(open.connection, marginMs)) return false;
  const after = await refresh(runtime, open, false, marginMs);
  return after.accessToken !== open.connection.accessToken;
}

async function refresh(
  runtime: CrmRuntime,
  open: OpenCrm,
  force: boolean,
  marginMs = REFRESH_MARGIN_MS,
): Promise<CrmConnection> {
  const id = open.connection.integrationId;
  try {
    return await runtime.db.transaction().execute(async (trx) => {
      const current = await findConnection(trx, id, true);
      if (!current) throw new CrmAuthorizationLostError(null, "no stored authorization");
      if (!force && !needsRefresh(current, marginMs)) return current;
      if (force && current.accessToken !== open.connection.accessToken) return current;
      const grant = await open.adapter.refresh(open.client, runtime.agentFor, {
        refreshToken: runtime.cipher.decrypt(current.refreshToken),
        apiBase: current.apiBase,
        metadata: current.metadata,
        checkApiBase: runtime.checkApiBase,
      });
      const stored = {
        accessToken: runtime.cipher.encrypt(grant.accessToken),
        refreshToken: runtime.cipher.encrypt(grant.refreshToken),
        apiBase: grant.apiBase,
        expiresAt: grant.expiresAt,
      };
      await storeTokens(trx, id, stored);
      return { ...current, ...stored, tokenExpiresAt: grant.expiresAt };
    });
  } catch (err) {
    if (
      err instanceof CrmApiError &&
      (err.authorizationRefused || err instanceof CrmAuthorizationLostError)
    ) {
      await authorizationLost(runtime, open.connection);
      throw err instanceof CrmAuthorizationLostError
        ? err
        : new CrmAuthorizationLostError(err.statusCode, err.message);
    }
    throw err;
  }
}

/** Moves the integration to `needs_attention` and tells the owner (once: only when it was connected). */
async function authorizationLost(runtime: CrmRuntime, connection: CrmConnection): Promise<void> {
  await runtime.db.transaction().execute(async (trx) => {
    if (!(await markNeedsAttention(trx, connection.integrationId))) return;
    const name = providerById(connection.provider)?.name ?? connection.provider;
    await recordOwnerNotice(trx, {
      accountId: connection.accountId,
      kind: "alert",
      summary:
        `Integration ${connection.integrationId} (${name}) lost its authorization: the CRM refused to ` +
        `renew its access. Nothing is sent to it until it is connected again with ` +
        `POST /api/v1/integrations/${connection.provider}/connect.`,
    });
  });
}

/** The adapter, client and connection of a CRM integration; undefined when it cannot be used here. */
export async function openCrm(
  runtime: CrmRuntime,
  integrationId: number,
  provider: CrmProviderId,
): Promise<OpenCrm | undefined> {
  const adapter = adapterFor(provider);
  const client = crmClient(runtime.config, provider);
  if (!adapter || !client) return undefined;
  const connection = await findConnection(runtime.db, integrationId);
  if (!connection) return undefined;
  return { adapter, client, connection };
}
