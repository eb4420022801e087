import { sql, type Selectable, type Updateable } from "kysely";
import type { components } from "../../generated/api.js";
import type { DbOrTrx, Trx } from "../db/database.js";
import type {
  IntegrationsTable,
  IntegrationSubscriptionsTable,
  StoredChangeSource,
} from "../db/schema/integrations.js";
import type { EventType } from "../events/types.js";
import type { ProviderId } from "./providers.js";

export type IntegrationStatus = components["schemas"]["IntegrationStatus"];

/** The API key that made a change, as read from `api_keys`. */
export interface ApiKeyRef {
  id: number;
  keyPrefix: string;
  name: string;
  revoked: boolean;
}

/** Who made a change: the channel and the key (null for the dashboard or a deleted key). */
export interface ChangeSource {
  channel: StoredChangeSource["channel"];
  apiKey: ApiKeyRef | null;
}

/** One subscription of an integration. `targetUrl` null: the integration's `targetUrl`. */
export interface Subscription {
  id: number;
  eventType: EventType;
  targetUrl: string | null;
  isActive: boolean;
  config: Record<string, unknown>;
}

/** An integration as the service sees it. Its secrets (signing secret, header API key) never leave SQL. */
export interface Integration {
  id: number;
  accountId: number;
  provider: ProviderId;
  status: IntegrationStatus;
  displayName: string;
  targetUrl: string | null;
  hasApiKey: boolean;
  /** The destinations the header API key is sent to. */
  apiKeyDestinations: string[];
  externalAccountId: string | null;
  metadata: Record<string, unknown>;
  dealSettings: Record<string, unknown> | null;
  consecutiveFailures: number;
  lastFailureAt: Date | null;
  lastSuccessAt: Date | null;
  tokenExpiresAt: Date | null;
  createdVia: ChangeSource | null;
  lastChangedVia: ChangeSource | null;
  lastChangedAt: Date | null;
  /** Counts setting changes; a PATCH writes on top of the revision it read (the conflict rule). */
  revision: number;
  createdAt: Date;
  updatedAt: Date;
  subscriptions: Subscription[];
}

/** A subscription to write. */
export interface SubscriptionValues {
  eventType: EventType;
  targetUrl: string | null;
  isActive: boolean;
  config: Record<string, unknown>;
}

// Every column but the secrets: `signing_secret` and `api_key` are written, never read here.
const COLUMNS = [
  "id",
  "account_id",
  "provider",
  "status",
  "display_name",
  "target_url",
  "api_key_destinations",
  "external_account_id",
  "metadata",
  "deal_settings",
  "consecutive_failures",
  "last_failure_at",
  "last_success_at",
  "token_expires_at",
  "created_via",
  "last_changed_via",
  "last_changed_at",
  "revision",
  "created_at",
  "updated_at",
] as const;

type IntegrationRow = Pick<Selectable<IntegrationsTable>, (typeof COLUMNS)[number]> & {
  has_api_key: boolean;
};

function selectIntegrations(db: DbOrTrx, accountId: number) {
  return db
    .selectFrom("integrations")
    .select(COLUMNS)
    .select(sql<boolean>`api_key is not null`.as("has_api_key"))
    .where("account_id", "=", accountId);
}

/** The account's integrations with their subscriptions, newest first. */
export async function listIntegrations(db: DbOrTrx, accountId: number): Promise<Integration[]> {
  const rows = await selectIntegrations(db, accountId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return withDetails(db, rows);
}

/** One integration of the account, or undefined. */
export async function findIntegration(
  db: DbOrTrx,
  accountId: number,
  id: number,
): Promise<Integration | undefined> {
  const row = await selectIntegrations(db, accountId).where("id", "=", id).executeTakeFirst();
  if (!row) return undefined;
  const [integration] = await withDetails(db, [row]);
  return integration;
}

async function withDetails(db: DbOrTrx, rows: IntegrationRow[]): Promise<Integration[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const subscriptions = await db
    .selectFrom("integration_subscriptions")
    .selectAll()
    .where("integration_id", "in", ids)
    .orderBy("id")
    .execute();
  const keyIds = new Set<number>();
  for (const row of rows) {
    for (const via of [row.created_via, row.last_changed_via]) if (via?.apiKeyId) keyIds.add(via.apiKeyId);
  }
  const keys =
    keyIds.size === 0
      ? []
      : await db
          .selectFrom("api_keys")
          .select(["id", "key_prefix", "name", "revoked_at"])
          .where("id", "in", [...keyIds])
          .execute();
  const keyById = new Map<number, ApiKeyRef>(
    keys.map((k) => [
      k.id,
      { id: k.id, keyPrefix: k.key_prefix, name: k.name, revoked: k.revoked_at !== null },
    ]),
  );
  const source = (via: StoredChangeSource | null): ChangeSource | null =>
    via
      ? { channel: via.channel, apiKey: via.apiKeyId === null ? null : (keyById.get(via.apiKeyId) ?? null) }
      : null;
  const subsByIntegration = new Map<number, Subscription[]>();
  for (const s of subscriptions) {
    const list = subsByIntegration.get(s.integration_id) ?? [];
    list.push(toSubscription(s));
    subsByIntegration.set(s.integration_id, list);
  }
  return rows.map((row) => ({
    id: row.id,
    accountId: row.account_id,
    provider: row.provider as ProviderId,
    status: row.status as IntegrationStatus,
    displayName: row.display_name,
    targetUrl: row.target_url,
    hasApiKey: row.has_api_key,
    apiKeyDestinations: row.api_key_destinations,
    externalAccountId: row.external_account_id,
    metadata: row.metadata,
    dealSettings: row.deal_settings,
    consecutiveFailures: row.consecutive_failures,
    lastFailureAt: row.last_failure_at,
    lastSuccessAt: row.last_success_at,
    tokenExpiresAt: row.token_expires_at,
    createdVia: source(row.created_via),
    lastChangedVia: source(row.last_changed_via),
    lastChangedAt: row.last_changed_at,
    revision: row.revision,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    subscriptions: subsByIntegration.get(row.id) ?? [],
  }));
}

function toSubscription(row: Selectable<IntegrationSubscriptionsTable>): Subscription {
  return {
    id: row.id,
    eventType: row.event_type as EventType,
    targetUrl: row.target_url,
    isActive: row.is_active,
    config: row.config,
  };
}

/**
 * Serialises the creations and re-points of one account's integrations until the transaction
 * ends, so the 25-integration limit and the one-destination-per-provider rule hold under
 * concurrent requests.
 */
export async function lockAccountIntegrations(trx: Trx, accountId: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`integrations:${accountId}`}, 0))`.execute(trx);
}

/** How many integrations the account has. */
export async function countIntegrations(db: DbOrTrx, accountId: number): Promise<number> {
  const row = await db
    .selectFrom("integrations")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("account_id", "=", accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Whether another integration of the account and provider already sends to exactly this URL. */
export async function providerTargetTaken(
  db: DbOrTrx,
  accountId: number,
  provider: string,
  targetUrl: string,
  exceptId?: number,
): Promise<boolean> {
  let query = db
    .selectFrom("integrations")
    .select("id")
    .where("account_id", "=", accountId)
    .where("provider", "=", provider)
    .where("target_url", "=", targetUrl);
  if (exceptId !== undefined) query = query.where("id", "<>", exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

/** A new webhook integration with its secrets; its id. */
export async function insertIntegration(
  trx: Trx,
  values: {
    accountId: number;
    provider: string;
    displayName: string;
    targetUrl: string;
    signingSecret: string;
    apiKey: string | null;
    apiKeyDestinations: string[];
    createdVia: StoredChangeSource;
  },
): Promise<number> {
  const row = await trx
    .insertInto("integrations")
    .values({
      account_id: values.accountId,
      provider: values.provider,
      display_name: values.displayName,
      target_url: values.targetUrl,
      signing_secret: values.signingSecret,
      api_key: values.apiKey,
      api_key_destinations: values.apiKeyDestinations,
      created_via: JSON.stringify(values.createdVia),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Adds subscriptions to an integration. */
export async function insertSubscriptions(
  trx: Trx,
  accountId: number,
  integrationId: number,
  subscriptions: readonly SubscriptionValues[],
): Promise<void> {
  if (subscriptions.length === 0) return;
  await trx
    .insertInto("integration_subscriptions")
    .values(
      subscriptions.map((s) => ({
        integration_id: integrationId,
        account_id: accountId,
        event_type: s.eventType,
        target_url: s.targetUrl,
        is_active: s.isActive,
        config: JSON.stringify(s.config),
      })),
    )
    .execute();
}

/** The columns a PATCH may write. */
export type IntegrationChange = Pick<
  Updateable<IntegrationsTable>,
  | "display_name"
  | "status"
  | "consecutive_failures"
  | "target_url"
  | "api_key"
  | "api_key_destinations"
  | "deal_settings"
>;

/**
 * Writes a change on top of the revision it was computed from, with who made it; false when the
 * integration is at another revision (a concurrent change landed) or gone.
 */
export async function updateAtRevision(
  trx: Trx,
  accountId: number,
  id: number,
  revision: number,
  change: IntegrationChange,
  changedVia: StoredChangeSource,
): Promise<boolean> {
  const result = await trx
    .updateTable("integrations")
    .set({
      ...change,
      last_changed_via: JSON.stringify(changedVia),
      last_changed_at: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
      revision: sql<number>`revision + 1`,
    })
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .where("revision", "=", revision)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Replaces an integration's subscriptions with `wanted`: a subscription of the same event and
 * `targetUrl` keeps its id (its delivery history stays linked), the others are removed or added.
 */
export async function replaceSubscriptions(
  trx: Trx,
  accountId: number,
  integrationId: number,
  wanted: readonly SubscriptionValues[],
): Promise<void> {
  const existing = await trx
    .selectFrom("integration_subscriptions")
    .select(["id", "event_type", "target_url"])
    .where("integration_id", "=", integrationId)
    .orderBy("id")
    .execute();
  const free = new Map<string, number>();
  for (const row of existing) free.set(subscriptionKey(row.event_type, row.target_url), row.id);
  const added: SubscriptionValues[] = [];
  for (const s of wanted) {
    const key = subscriptionKey(s.eventType, s.targetUrl);
    const id = free.get(key);
    if (id === undefined) {
      added.push(s);
      continue;
    }
    free.delete(key);
    await trx
      .updateTable("integration_subscriptions")
      .set({ is_active: s.isActive, config: JSON.stringify(s.config) })
      .where("id", "=", id)
      .execute();
  }
  if (free.size > 0) {
    await trx
      .deleteFrom("integration_subscriptions")
      .where("id", "in", [...free.values()])
      .execute();
  }
  await insertSubscriptions(trx, accountId, integrationId, added);
}

/** The key of a subscription: its event and its own destination (null: the integration's). */
export function subscriptionKey(eventType: string, targetUrl: string | null): string {
  return `${eventType} ${targetUrl ?? ""}`;
}

/** Points every subscription of an integration to the integration's `targetUrl`. */
export async function clearSubscriptionTargets(trx: Trx, integrationId: number): Promise<void> {
  await trx
    .updateTable("integration_subscriptions")
    .set({ target_url: null })
    .where("integration_id", "=", integrationId)
    .where("target_url", "is not", null)
    .execute();
}

/**
 * Whether the API key is usable, read with a share lock: a revocation cannot commit until the
 * transaction ends, and one that committed meanwhile is seen (false for a revoked or deleted key).
 */
export async function keyStillActive(trx: Trx, keyId: number): Promise<boolean> {
  const row = await trx
    .selectFrom("api_keys")
    .select("revoked_at")
    .where("id", "=", keyId)
    .forShare()
    .executeTakeFirst();
  return row !== undefined && row.revoked_at === null;
}

/** Deletes an integration (its subscriptions and deliveries go with it); false when not the account's. */
export async function deleteIntegration(db: DbOrTrx, accountId: number, id: number): Promise<boolean> {
  const result = await db
    .deleteFrom("integrations")
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
