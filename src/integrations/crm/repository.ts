import { sql } from "kysely";
import type { DbOrTrx, Trx } from "../../db/database.js";
import type { StoredChangeSource } from "../../db/schema/integrations.js";
import type { CrmField } from "./mapping.js";

/** A connect link's state as stored (the state itself is only kept hashed). */
export interface OAuthState {
  accountId: number;
  /** The API key that asked for the link, or null when a dashboard session did. */
  apiKeyId: number | null;
  /** The dashboard session that asked for the link, or null when an API key did. */
  sessionId: number | null;
  provider: string;
  environment: "production" | "sandbox";
  codeVerifier: string | null;
  expiresAt: Date;
}

export async function insertOAuthState(db: DbOrTrx, stateHash: string, state: OAuthState): Promise<void> {
  await db
    .insertInto("crm_oauth_states")
    .values({
      state_hash: stateHash,
      account_id: state.accountId,
      api_key_id: state.apiKeyId,
      session_id: state.sessionId,
      provider: state.provider,
      environment: state.environment,
      code_verifier: state.codeVerifier,
      expires_at: state.expiresAt,
    })
    .execute();
  // Expired links of the account are of no use any more.
  await db
    .deleteFrom("crm_oauth_states")
    .where("account_id", "=", state.accountId)
    .where("expires_at", "<", new Date(Date.now() - 3_600_000))
    .execute();
}

/** Takes a state (single use): the stored link, or undefined when unknown. */
export async function takeOAuthState(db: DbOrTrx, stateHash: string): Promise<OAuthState | undefined> {
  const row = await db
    .deleteFrom("crm_oauth_states")
    .where("state_hash", "=", stateHash)
    .returningAll()
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    accountId: row.account_id,
    apiKeyId: row.api_key_id,
    sessionId: row.session_id,
    provider: row.provider,
    environment: row.environment === "sandbox" ? "sandbox" : "production",
    codeVerifier: row.code_verifier,
    expiresAt: row.expires_at,
  };
}

/** A CRM integration's connection: encrypted tokens, API base, saved field mapping. */
export interface CrmConnection {
  integrationId: number;
  accountId: number;
  provider: string;
  status: string;
  metadata: Record<string, unknown>;
  dealSettings: Record<string, unknown> | null;
  tokenExpiresAt: Date | null;
  accessToken: string;
  refreshToken: string;
  apiBase: string;
  fieldMapping: Record<string, unknown>;
}

function connectionQuery(db: DbOrTrx) {
  return db
    .selectFrom("crm_connections as c")
    .innerJoin("integrations as i", "i.id", "c.integration_id")
    .select([
      "c.integration_id",
      "i.account_id",
      "i.provider",
      "i.status",
      "i.metadata",
      "i.deal_settings",
      "i.token_expires_at",
      "c.access_token",
      "c.refresh_token",
      "c.api_base",
      "c.field_mapping",
    ]);
}

type ConnectionRow = Awaited<ReturnType<ReturnType<typeof connectionQuery>["executeTakeFirstOrThrow"]>>;

function toConnection(row: ConnectionRow): CrmConnection {
  return {
    integrationId: row.integration_id,
    accountId: row.account_id,
    provider: row.provider,
    status: row.status,
    metadata: row.metadata,
    dealSettings: row.deal_settings,
    tokenExpiresAt: row.token_expires_at,
    accessToken: row.access_token,
    refreshToken: row.refresh_token,
    apiBase: row.api_base,
    fieldMapping: row.field_mapping,
  };
}

/** The connection of a CRM integration; `lock` holds it until the transaction ends (a refresh). */
export async function findConnection(
  db: DbOrTrx,
  integrationId: number,
  lock = false,
): Promise<CrmConnection | undefined> {
  let query = connectionQuery(db).where("c.integration_id", "=", integrationId);
  if (lock) query = query.forUpdate("c");
  const row = await query.executeTakeFirst();
  return row ? toConnection(row) : undefined;
}

/** Stores refreshed tokens (encrypted) and the integration's `tokenExpiresAt`. */
export async function storeTokens(
  trx: Trx,
  integrationId: number,
  tokens: { accessToken: string; refreshToken: string; apiBase: string; expiresAt: Date },
): Promise<void> {
  await trx
    .updateTable("crm_connections")
    .set({
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      api_base: tokens.apiBase,
      refreshed_at: new Date(),
    })
    .where("integration_id", "=", integrationId)
    .execute();
  await trx
    .updateTable("integrations")
    .set({ token_expires_at: tokens.expiresAt, updated_at: new Date() })
    .where("id", "=", integrationId)
    .execute();
}

/** Moves a connected integration to `needs_attention`; false when it was not connected. */
export async function markNeedsAttention(trx: Trx, integrationId: number): Promise<boolean> {
  const result = await trx
    .updateTable("integrations")
    .set({ status: "needs_attention", last_failure_at: new Date(), updated_at: new Date() })
    .where("id", "=", integrationId)
    .where("status", "=", "connected")
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The account's integration of a CRM account (provider, external id and environment), if any. */
export async function findCrmIntegration(
  trx: Trx,
  accountId: number,
  provider: string,
  externalAccountId: string,
  environment: string,
): Promise<number | undefined> {
  const row = await trx
    .selectFrom("integrations")
    .select("id")
    .where("account_id", "=", accountId)
    .where("provider", "=", provider)
    .where("external_account_id", "=", externalAccountId)
    .where(sql<boolean>`coalesce(metadata->>'environment', 'production') = ${environment}`)
    .executeTakeFirst();
  return row?.id;
}

/** Whether the account has an integration of this provider (connect may then renew it). */
export async function hasProviderIntegration(
  db: DbOrTrx,
  accountId: number,
  provider: string,
): Promise<boolean> {
  const row = await db
    .selectFrom("integrations")
    .select("id")
    .where("account_id", "=", accountId)
    .where("provider", "=", provider)
    .executeTakeFirst();
  return row !== undefined;
}

/** What the callback writes for a connected CRM account. */
export interface CrmGrantValues {
  accountId: number;
  provider: string;
  displayName: string;
  externalAccountId: string;
  metadata: Record<string, unknown>;
  tokenExpiresAt: Date;
  accessToken: string;
  refreshToken: string;
  apiBase: string;
  signingSecret: string;
  source: StoredChangeSource;
}

/** A new CRM integration and its connection; its id. */
export async function insertCrmIntegration(trx: Trx, v: CrmGrantValues): Promise<number> {
  const row = await trx
    .insertInto("integrations")
    .values({
      account_id: v.accountId,
      provider: v.provider,
      display_name: v.displayName,
      target_url: null,
      signing_secret: v.signingSecret,
      api_key: null,
      api_key_destinations: [],
      external_account_id: v.externalAccountId,
      metadata: JSON.stringify(v.metadata),
      deal_settings:
        v.provider === "crm_deals"
          ? JSON.stringify({ createDeals: false, pipelineId: null, stageId: null })
          : null,
      token_expires_at: v.tokenExpiresAt,
      created_via: JSON.stringify(v.source),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  await trx
    .insertInto("crm_connections")
    .values({
      integration_id: row.id,
      access_token: v.accessToken,
      refresh_token: v.refreshToken,
      api_base: v.apiBase,
    })
    .execute();
  return row.id;
}

/** Renews the authorization of an existing CRM integration: new tokens, connected again. */
export async function renewCrmIntegration(trx: Trx, id: number, v: CrmGrantValues): Promise<void> {
  await trx
    .updateTable("integrations")
    .set({
      status: "connected",
      consecutive_failures: 0,
      metadata: JSON.stringify(v.metadata),
      token_expires_at: v.tokenExpiresAt,
      last_changed_via: JSON.stringify(v.source),
      last_changed_at: new Date(),
      updated_at: new Date(),
    })
    .where("id", "=", id)
    .execute();
  await trx
    .insertInto("crm_connections")
    .values({
      integration_id: id,
      access_token: v.accessToken,
      refresh_token: v.refreshToken,
      api_base: v.apiBase,
    })
    .onConflict((oc) =>
      oc.column("integration_id").doUpdateSet({
        access_token: v.accessToken,
        refresh_token: v.refreshToken,
        api_base: v.apiBase,
        refreshed_at: new Date(),
      }),
    )
    .execute();
}

/** Replaces the saved field mapping. */
export async function saveFieldMapping(
  db: DbOrTrx,
  integrationId: number,
  mapping: Record<string, unknown>,
): Promise<void> {
  await db
    .updateTable("crm_connections")
    .set({ field_mapping: JSON.stringify(mapping) })
    .where("integration_id", "=", integrationId)
    .execute();
}

/** Cached CRM field lists of an integration with when each was loaded. */
export async function cachedFieldLists(
  db: DbOrTrx,
  integrationId: number,
): Promise<Map<string, { fields: CrmField[]; cachedAt: Date }>> {
  const rows = await db
    .selectFrom("crm_field_lists")
    .select(["list", "fields", "cached_at"])
    .where("integration_id", "=", integrationId)
    .execute();
  return new Map(rows.map((r) => [r.list, { fields: r.fields as CrmField[], cachedAt: r.cached_at }]));
}

/** Stores freshly loaded field lists. */
export async function storeFieldLists(
  db: DbOrTrx,
  integrationId: number,
  lists: Record<string, CrmField[]>,
  cachedAt: Date,
): Promise<void> {
  const rows = Object.entries(lists).map(([list, fields]) => ({
    integration_id: integrationId,
    list,
    fields: JSON.stringify(fields),
    cached_at: cachedAt,
  }));
  if (rows.length === 0) return;
  await db
    .insertInto("crm_field_lists")
    .values(rows)
    .onConflict((oc) =>
      oc.columns(["integration_id", "list"]).doUpdateSet((eb) => ({
        fields: eb.ref("excluded.fields"),
        cached_at: eb.ref("excluded.cached_at"),
      })),
    )
    .execute();
}

/** Connected CRM integrations of these providers whose tokens expire before `before`, soonest first. */
export async function connectionsDueForRefresh(
  db: DbOrTrx,
  providers: readonly string[],
  before: Date,
  limit: number,
): Promise<{ id: number; provider: string }[]> {
  if (providers.length === 0) return [];
  return db
    .selectFrom("integrations as i")
    .innerJoin("crm_connections as c", "c.integration_id", "i.id")
    .select(["i.id", "i.provider"])
    .where("i.status", "=", "connected")
    .where("i.provider", "in", [...providers])
    .where("i.token_expires_at", "<", before)
    .orderBy("i.token_expires_at")
    .limit(limit)
    .execute();
}

/**
 * Whether the dashboard session that asked for a connect link is still live (not signed out, not
 * expired). With `lock`, in a transaction, the row is held with a share lock until commit, so a
 * sign-out (an update of the row) waits for the connection being written, or is seen by it.
 */
export async function sessionStillLive(db: DbOrTrx, sessionId: number, lock = false): Promise<boolean> {
  let query = db
    .selectFrom("dashboard_sessions")
    .select("id")
    .where("id", "=", String(sessionId))
    .where("revoked_at", "is", null)
    .where((eb) => eb("expires_at", ">", eb.fn<Date>("now", [])));
  if (lock) query = query.forShare();
  return (await query.executeTakeFirst()) !== undefined;
}
