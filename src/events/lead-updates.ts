import { sql } from "kysely";
import type { DbOrTrx } from "../db/database.js";
import type { LeadEventSource } from "./types.js";

/** A changed lead that an account holds and would be told about (`lead.updated`, live updates). */
export interface LeadUpdateTarget {
  accountId: number;
  leadId: number;
  /** The lead's version after the change (the event carries this data). */
  version: number;
  /** How the lead reached the account (its lead export history entry's method). */
  source: LeadEventSource;
  /** The lead's URLs, to check against the account's export blacklist. */
  registeredUrl: string | null;
  crawledUrl: string | null;
}

/**
 * The accounts to tell about changed leads (live updates of an import): for each changed lead, every
 * account whose lead export history holds it at another version and that has an active
 * `lead.updated` subscription on a connected integration, in one statement over the unique key
 * `(lead_id, account_id)` (the subscribed accounts are read once per statement, not per row). A lead received through an enrichment is announced with source `api`
 * (lead events know no `enrichment` source). `ids` and `versions` are parallel lists.
 */
export async function findLeadUpdateTargets(
  db: DbOrTrx,
  changed: { ids: readonly number[]; versions: readonly number[] },
): Promise<LeadUpdateTarget[]> {
  if (changed.ids.length === 0) return [];
  const { rows } = await sql<{
    account_id: number;
    lead_id: number;
    version: number;
    source: LeadEventSource;
    registered_url: string | null;
    crawled_url: string | null;
  }>`
    with subscribed as materialized (
      select distinct s.account_id from integration_subscriptions s
      join integrations i on i.id = s.integration_id
      where s.event_type = 'lead.updated' and s.is_active and i.status = 'connected'
    )
    select h.account_id, c.lead_id, c.version,
      case when h.export_method = 'enrichment' then 'api' else h.export_method end as source,
      l.registered_url, l.crawled_url
    from unnest(cast(${changed.ids} as integer[]), cast(${changed.versions} as integer[])) as c(lead_id, version)
    -- Driven by the changed leads, one index probe each (offset 0 keeps the planner from turning
    -- this into a scan of every held entry of the subscribed accounts, measured 1 s per chunk).
    cross join lateral (
      select h.account_id, h.export_method from lead_export_history h
      where h.lead_id = c.lead_id and h.lead_version is distinct from c.version
        and h.account_id in (select account_id from subscribed)
      offset 0) h
    cross join lateral (select l.registered_url, l.crawled_url from leads l where l.id = c.lead_id offset 0) l
    order by h.account_id, c.lead_id`.execute(db);
  return rows.map((r) => ({
    accountId: r.account_id,
    leadId: r.lead_id,
    version: r.version,
    source: r.source,
    registeredUrl: r.registered_url,
    crawledUrl: r.crawled_url,
  }));
}
