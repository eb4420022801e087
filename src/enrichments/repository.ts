import { sql, type Selectable } from "kysely";
import type { Db, DbOrTrx, Trx } from "../db/database.js";
import type { EnrichmentRunsTable } from "../db/schema/enrichments.js";
import type { ContactTypes, EnrichmentRun, RowStatus, RunStatus } from "./run.js";
import type { SubmittedRow } from "./urls.js";

/** The graphile-worker task that processes runs, one slice at a time. */
export const RUN_TASK = "enrichments__run";

type RunRow = Selectable<EnrichmentRunsTable>;

function toRun(row: RunRow): EnrichmentRun {
  return {
    id: row.id,
    accountId: row.account_id,
    status: row.status as RunStatus,
    contactTypes: row.contact_types as ContactTypes,
    databaseMatchPercent: row.database_match_percent,
    maxCreditsTenths: row.max_credits_tenths === null ? null : Number(row.max_credits_tenths),
    limitTenths: Number(row.limit_tenths),
    emailResults: row.email_results,
    submittedCount: row.submitted_count,
    duplicatesRemoved: row.duplicates_removed,
    skippedInvalid: row.skipped_invalid,
    urlCount: row.url_count,
    processed: row.processed,
    matchCursor: row.match_cursor,
    database: {
      matched: row.db_matched,
      charged: row.db_charged,
      free: row.db_free,
      skippedOverBudget: row.db_skipped_budget,
      noRequestedContact: row.db_no_contact,
    },
    live: {
      sentToScraper: row.live_sent,
      delivered: row.live_delivered,
      failed: row.live_failed,
      noRequestedContact: row.live_no_contact,
      skippedOverBudget: row.live_skipped_budget,
    },
    dbChargedTenths: Number(row.db_charged_tenths),
    liveChargedTenths: Number(row.live_charged_tenths),
    creditsFinal: row.credits_final,
    resultRowCount: row.result_row_count,
    resultEntryId: row.result_entry_id,
    endedEarly: row.ended_early,
    error: row.error,
    createdAt: row.created_at,
    startedAt: row.started_at,
    completedAt: row.completed_at,
  };
}

/** A new run, before its rows. */
export interface NewRun {
  accountId: number;
  contactTypes: ContactTypes;
  databaseMatchPercent: number;
  maxCreditsTenths: number | null;
  limitTenths: number;
  emailResults: boolean;
  submittedCount: number;
  duplicatesRemoved: number;
  skippedInvalid: number;
  urlCount: number;
}

/** Inserts a run (status `queued`); the unusable entries count as processed from the start. */
export async function insertRun(trx: Trx, run: NewRun): Promise<EnrichmentRun> {
  const row = await trx
    .insertInto("enrichment_runs")
    .values({
      account_id: run.accountId,
      contact_types: run.contactTypes,
      database_match_percent: run.databaseMatchPercent,
      max_credits_tenths: run.maxCreditsTenths,
      limit_tenths: run.limitTenths,
      email_results: run.emailResults,
      submitted_count: run.submittedCount,
      duplicates_removed: run.duplicatesRemoved,
      skipped_invalid: run.skippedInvalid,
      url_count: run.urlCount,
      processed: run.skippedInvalid,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRun(row);
}

/** Rows inserted per statement (arrays of positions, URLs and hosts). */
const INSERT_CHUNK = 20_000;

/** Inserts the rows of a run in submission order; unusable entries are `skipped_invalid` at once. */
export async function insertRows(trx: Trx, runId: number, rows: readonly SubmittedRow[]): Promise<void> {
  for (let from = 0; from < rows.length; from += INSERT_CHUNK) {
    const chunk = rows.slice(from, from + INSERT_CHUNK);
    const positions = chunk.map((_, i) => from + i);
    await sql`
      insert into enrichment_urls (run_id, position, submitted_url, host, status)
      select ${runId}, p, u, h, case when h is null then 'skipped_invalid' end
      from unnest(cast(${positions} as integer[]), cast(${chunk.map((r) => r.submittedUrl)} as text[]),
        cast(${chunk.map((r) => r.host)} as text[])) as t(p, u, h)`.execute(trx);
  }
}

/** Queues the processing of a run (in the caller's transaction; one pending job per run). */
export async function queueRun(db: DbOrTrx, runId: number, runAt?: Date): Promise<void> {
  await sql`select graphile_worker.add_job(
      ${RUN_TASK}::text,
      json_build_object('runId', ${runId}::int),
      job_key => ${`enrichment:${runId}`}::text,
      run_at => ${runAt ?? null}::timestamptz,
      max_attempts => 10
    )`.execute(db);
}

/** The account's setting that `emailResults` defaults to (false when never set). */
export async function findEmailResultsSetting(db: DbOrTrx, accountId: number): Promise<boolean> {
  const row = await db
    .selectFrom("enrichment_settings")
    .select("email_results")
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return row?.email_results ?? false;
}

export async function findRun(
  db: DbOrTrx,
  accountId: number,
  id: number,
): Promise<EnrichmentRun | undefined> {
  const row = await db
    .selectFrom("enrichment_runs")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return row && toRun(row);
}

export async function findRunById(db: DbOrTrx, id: number): Promise<EnrichmentRun | undefined> {
  const row = await db.selectFrom("enrichment_runs").selectAll().where("id", "=", id).executeTakeFirst();
  return row && toRun(row);
}

/** One page of the account's runs, newest first, with the number of all of them. */
export async function listRuns(
  db: DbOrTrx,
  accountId: number,
  page: { limit: number; offset: number },
): Promise<{ runs: EnrichmentRun[]; totalCount: number }> {
  const [rows, count] = await Promise.all([
    db
      .selectFrom("enrichment_runs")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("id", "desc")
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    db
      .selectFrom("enrichment_runs")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("account_id", "=", accountId)
      .executeTakeFirstOrThrow(),
  ]);
  return { runs: rows.map(toRun), totalCount: Number(count.n) };
}

// ---------------------------------------------------------------------------------------------
// The lease of the worker processing a run.
// ---------------------------------------------------------------------------------------------

/**
 * Takes the run for this worker when it is unfinished and nobody holds it (or its holder's
 * heartbeat is older than `staleMs`: a crashed worker). Moves `queued` to `matching`.
 */
export async function claimRun(
  db: Db,
  id: number,
  token: string,
  staleMs: number,
): Promise<EnrichmentRun | undefined> {
  const row = await db
    .updateTable("enrichment_runs")
    .set({
      lease_token: token,
      heartbeat_at: sql<Date>`now()`,
      started_at: sql<Date>`coalesce(started_at, now())`,
      status: sql<string>`case when status = 'queued' then 'matching' else status end`,
      updated_at: sql<Date>`now()`,
    })
    .where("id", "=", id)
    .where("status", "not in", ["completed", "partial", "failed"])
    .where((eb) =>
      eb.or([
        eb("lease_token", "is", null),
        eb("heartbeat_at", "<", sql<Date>`now() - make_interval(secs => ${staleMs / 1000})`),
      ]),
    )
    .returningAll()
    .executeTakeFirst();
  return row && toRun(row);
}

/** Thrown when another worker took the run over: the slice's transaction rolls back. */
export class LeaseLostError extends Error {
  constructor(runId: number) {
    super(`enrichment run ${runId} was taken over by another worker`);
    this.name = "LeaseLostError";
  }
}

/** Counter changes of one step (added to the run's counters). */
export type CounterChanges = Partial<
  Record<
    | "processed"
    | "db_matched"
    | "db_charged"
    | "db_free"
    | "db_skipped_budget"
    | "db_no_contact"
    | "live_sent"
    | "live_delivered"
    | "live_failed"
    | "live_no_contact"
    | "live_skipped_budget"
    | "db_charged_tenths"
    | "live_charged_tenths",
    number
  >
>;

/** Other changes of one step. */
export interface RunChanges {
  status?: RunStatus;
  matchCursor?: number;
  creditsFinal?: boolean;
  resultRowCount?: number;
  resultEntryId?: number;
  endedEarly?: boolean;
  error?: string | null;
  completed?: boolean;
  releaseLease?: boolean;
}

/**
 * Applies a step's changes to the run while this worker holds its lease, renewing the heartbeat
 * (and locking the run row to the commit, so steps of one run never interleave).
 * @throws LeaseLostError when another worker holds the run now
 */
export async function updateLeasedRun(
  db: DbOrTrx,
  id: number,
  token: string,
  counters: CounterChanges = {},
  changes: RunChanges = {},
): Promise<EnrichmentRun> {
  const set: Record<string, unknown> = { heartbeat_at: sql`now()`, updated_at: sql`now()` };
  for (const [column, delta] of Object.entries(counters)) {
    if (delta) set[column] = sql`${sql.ref(column)} + ${delta}`;
  }
  if (changes.status !== undefined) set.status = changes.status;
  if (changes.matchCursor !== undefined) set.match_cursor = changes.matchCursor;
  if (changes.creditsFinal !== undefined) set.credits_final = changes.creditsFinal;
  if (changes.resultRowCount !== undefined) set.result_row_count = changes.resultRowCount;
  if (changes.resultEntryId !== undefined) set.result_entry_id = changes.resultEntryId;
  if (changes.endedEarly !== undefined) set.ended_early = changes.endedEarly;
  if (changes.error !== undefined) set.error = changes.error;
  if (changes.completed) set.completed_at = sql`now()`;
  if (changes.releaseLease) set.lease_token = null;
  const row = await db
    .updateTable("enrichment_runs")
    .set(set)
    .where("id", "=", id)
    .where("lease_token", "=", token)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new LeaseLostError(id);
  return toRun(row);
}

/** Unfinished runs whose worker stopped sending heartbeats (or that never started), oldest first. */
export async function findStalledRunIds(db: DbOrTrx, staleMs: number, limit = 100): Promise<number[]> {
  const rows = await db
    .selectFrom("enrichment_runs")
    .select("id")
    .where("status", "not in", ["completed", "partial", "failed"])
    .where((eb) =>
      eb(
        sql<Date>`coalesce(heartbeat_at, created_at)`,
        "<",
        sql<Date>`now() - make_interval(secs => ${staleMs / 1000})`,
      ),
    )
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

// ---------------------------------------------------------------------------------------------
// Rows.
// ---------------------------------------------------------------------------------------------

/** A row's final status (and what it cost, its lead or its live contacts). */
export interface RowOutcome {
  position: number;
  status: RowStatus;
  creditsTenths?: number;
  leadId?: number | null;
  contacts?: Record<string, unknown> | null;
}

/**
 * Writes the outcomes of rows still without a status, in one statement; returns the outcomes
 * written (a row another step already settled is left as it is and not counted again).
 */
export async function setRowOutcomes(
  db: DbOrTrx,
  runId: number,
  outcomes: readonly RowOutcome[],
): Promise<RowOutcome[]> {
  if (outcomes.length === 0) return [];
  const { rows } = await sql<{ position: number }>`
    update enrichment_urls e set
      status = t.status,
      credits_tenths = t.tenths,
      lead_id = t.lead_id,
      contacts = t.contacts
    from unnest(
      cast(${outcomes.map((o) => o.position)} as integer[]),
      cast(${outcomes.map((o) => o.status)} as text[]),
      cast(${outcomes.map((o) => o.creditsTenths ?? 0)} as integer[]),
      cast(${outcomes.map((o) => o.leadId ?? null)} as integer[]),
      cast(${outcomes.map((o) => (o.contacts ? JSON.stringify(o.contacts) : null))} as jsonb[])
    ) as t(position, status, tenths, lead_id, contacts)
    where e.run_id = ${runId} and e.position = t.position and e.status is null
    returning e.position`.execute(db);
  const written = new Set(rows.map((row) => row.position));
  return outcomes.filter((outcome) => written.has(outcome.position));
}

/** Usable rows after `cursor` in position order (the next batch to match). */
export async function findRowsToMatch(
  db: DbOrTrx,
  runId: number,
  cursor: number,
  limit: number,
): Promise<{ position: number; host: string }[]> {
  const rows = await db
    .selectFrom("enrichment_urls")
    .select(["position", "host"])
    .where("run_id", "=", runId)
    .where("position", ">", cursor)
    .where("host", "is not", null)
    .orderBy("position")
    .limit(limit)
    .execute();
  return rows.map((row) => ({ position: row.position, host: row.host ?? "" }));
}

/** A database match of a row: the lead, whether the account has it, and its contacts. */
export interface DatabaseMatch {
  position: number;
  leadId: number;
  received: boolean;
  hasPhone: boolean;
  hasEmail: boolean;
}

/**
 * Hosts that many unrelated businesses share (social networks, listing and site-builder
 * hosts): a lead's page there says nothing about another page there, so URLs on them are never
 * matched by host.
 */
export const SHARED_HOSTS = [
  "facebook.com",
  "instagram.com",
  "linkedin.com",
  "twitter.com",
  "x.com",
  "youtube.com",
  "tiktok.com",
  "pinterest.com",
  "yelp.com",
  "google.com",
  "maps.google.com",
  "business.site",
  "sites.google.com",
  "nextdoor.com",
  "angi.com",
  "houzz.com",
  "linktr.ee",
] as const;

/**
 * The database matches of a batch of hosts, in one statement: for each host the lead whose
 * registered URL has it (else, for hosts no registered URL has, whose crawled URL has it), the
 * lowest id when several do, through the expression indexes of migration 1120; with whether the
 * account received it before and which contact details it has.
 */
export async function matchHosts(
  db: DbOrTrx,
  accountId: number,
  rows: readonly { position: number; host: string }[],
): Promise<DatabaseMatch[]> {
  const wanted = rows.filter((row) => !(SHARED_HOSTS as readonly string[]).includes(row.host));
  if (wanted.length === 0) return [];
  const { rows: found } = await sql<{
    position: number;
    lead_id: number;
    received: boolean;
    has_phone: boolean;
    has_email: boolean;
  }>`
    with u as (
      select * from unnest(cast(${wanted.map((r) => r.position)} as integer[]), cast(${wanted.map((r) => r.host)} as text[]))
        as u(position, host)
    ), registered as (
      select distinct on (u.position) u.position, l.id
      from u join leads l on enrichment_url_host(l.registered_url) = u.host
      order by u.position, l.id
    ), crawled as (
      select distinct on (u.position) u.position, l.id
      from u join leads l on enrichment_url_host(l.crawled_url) = u.host
      where not exists (select 1 from registered r where r.position = u.position)
      order by u.position, l.id
    ), matched as (
      select * from registered union all select * from crawled
    )
    select m.position, l.id as lead_id,
      exists (select 1 from lead_export_history h where h.account_id = ${accountId} and h.lead_id = l.id) as received,
      (nullif(l.phone, '') is not null or nullif(l.phone_secondary, '') is not null) as has_phone,
      (nullif(l.email, '') is not null or nullif(l.email_secondary, '') is not null) as has_email
    from matched m join leads l on l.id = m.id`.execute(db);
  return found.map((row) => ({
    position: row.position,
    leadId: row.lead_id,
    received: row.received,
    hasPhone: row.has_phone,
    hasEmail: row.has_email,
  }));
}

/** Rows still waiting for a live fetch (after matching), in position order. */
export async function findRowsToFetch(
  db: DbOrTrx,
  runId: number,
  afterPosition: number,
  limit: number,
): Promise<{ position: number; submittedUrl: string; host: string }[]> {
  const rows = await db
    .selectFrom("enrichment_urls")
    .select(["position", "submitted_url", "host"])
    .where("run_id", "=", runId)
    .where("status", "is", null)
    .where("position", ">", afterPosition)
    .orderBy("position")
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    position: row.position,
    submittedUrl: row.submitted_url,
    host: row.host ?? "",
  }));
}

/**
 * Marks every row still without a status; returns how many. For the rows live fetching left when
 * the budget was spent (`skipped_scrape_budget`) or its time ran out (`scrape_failed`).
 */
export async function markPendingRows(db: DbOrTrx, runId: number, status: RowStatus): Promise<number> {
  const result = await db
    .updateTable("enrichment_urls")
    .set({ status })
    .where("run_id", "=", runId)
    .where("status", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Turns the `scraped` rows after the first `keep` (in position order) into `skipped_scrape_budget`:
 * live results the credit limit or the balance cannot pay when the file is published.
 */
export async function capScrapedRows(db: DbOrTrx, runId: number, keep: number): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    with over as (
      select position from enrichment_urls
      where run_id = ${runId} and status = 'scraped'
      order by position offset ${keep}
    ), updated as (
      update enrichment_urls e set status = 'skipped_scrape_budget', credits_tenths = 0, contacts = null
      from over where e.run_id = ${runId} and e.position = over.position
      returning 1
    )
    select count(*) as n from updated`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** How many rows have each status. */
export async function countRowStatuses(db: DbOrTrx, runId: number): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom("enrichment_urls")
    .select(["status", (eb) => eb.fn.countAll<string>().as("n")])
    .where("run_id", "=", runId)
    .groupBy("status")
    .execute();
  return new Map(rows.map((row) => [row.status ?? "pending", Number(row.n)]));
}

/** One row of the result file as stored. */
export interface FileRow {
  position: number;
  submittedUrl: string;
  status: RowStatus;
  creditsTenths: number;
  leadId: number | null;
  contacts: Record<string, unknown> | null;
}

/** Rows of the file in position order, `limit` after `afterPosition`. */
export async function findFileRows(
  db: DbOrTrx,
  runId: number,
  afterPosition: number,
  limit: number,
): Promise<FileRow[]> {
  const rows = await db
    .selectFrom("enrichment_urls")
    .select(["position", "submitted_url", "status", "credits_tenths", "lead_id", "contacts"])
    .where("run_id", "=", runId)
    .where("position", ">", afterPosition)
    .orderBy("position")
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    position: row.position,
    submittedUrl: row.submitted_url,
    status: (row.status ?? "scrape_failed") as RowStatus,
    creditsTenths: row.credits_tenths,
    leadId: row.lead_id,
    contacts: row.contacts,
  }));
}
