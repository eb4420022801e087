import { sql } from "kysely";
import type { DbOrTrx } from "../../db/database.js";

/**
 * Takes up to `batches` queued import batches (oldest first, skipping those another sender holds,
 * only those queued before `queuedBefore` when given) and deletes them in the caller's
 * transaction: answers their changed leads, each once at its newest version (`ids` and `versions`
 * parallel), or null when nothing was queued.
 */
export async function takeQueuedLiveUpdates(
  trx: DbOrTrx,
  batches: number,
  queuedBefore?: Date,
): Promise<{ ids: number[]; versions: number[] } | null> {
  const { rows } = await sql<{ ids: number[] | null; versions: number[] | null }>`
    with taken as (
      delete from lead_live_updates where id in (
        select id from lead_live_updates
        where ${queuedBefore === undefined ? sql`true` : sql`created_at < ${queuedBefore}`}
        order by id limit ${batches} for update skip locked)
      returning lead_ids, versions
    ),
    latest as (
      select c.lead_id, max(c.version) as version
      from taken t cross join lateral unnest(t.lead_ids, t.versions) as c(lead_id, version)
      group by c.lead_id
    )
    select array_agg(lead_id order by lead_id) as ids, array_agg(version order by lead_id) as versions
    from latest`.execute(trx);
  const row = rows[0];
  if (!row?.ids || !row.versions) return null;
  return { ids: row.ids, versions: row.versions };
}

/** Queues changed leads for live updates outside an import (tests and the import bench). */
export async function queueLiveUpdates(
  db: DbOrTrx,
  changed: { ids: readonly number[]; versions: readonly number[] },
): Promise<void> {
  await sql`insert into lead_live_updates (lead_ids, versions)
    values (cast(${changed.ids} as integer[]), cast(${changed.versions} as integer[]))`.execute(db);
}
