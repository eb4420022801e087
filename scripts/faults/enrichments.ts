import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import type { Db } from "../../src/db/database.js";
import {
  homePage,
  startSmallBusinessSites,
  type SmallBusinessSites,
} from "../../test/helpers/small-business-sites.js";
import { api, sleep } from "./harness.js";

// Enrichment runs for the fault scenarios and the soak (docs/enrichments.md): URLs of leads in the
// database (matched by host and charged a credit each) and of local websites read live by the
// worker's crawler (0.1 credit a result). The sites are the tests' local server of small-business
// sites; their names (`*.faults.test`) resolve to 127.0.0.1 in the service's processes through a
// preloaded module (loopback-dns.mjs), since no DNS server knows them.

/** Environment of the service's processes so that `*.faults.test` resolves to 127.0.0.1. */
export function loopbackDnsEnv(): Record<string, string> {
  const preload = fileURLToPath(new URL("./loopback-dns.mjs", import.meta.url));
  return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${preload}`.trim() };
}

/**
 * `count` local sites named `<prefix><n>.faults.test`, each answering every page after `delayMs`
 * (so live fetching lasts a while): robots.txt allowing all and a home page with a phone number.
 */
export async function startSites(
  prefix: string,
  count: number,
  delayMs: number,
): Promise<SmallBusinessSites> {
  const sites = await startSmallBusinessSites();
  addSites(sites, prefix, count, delayMs);
  return sites;
}

/** Adds `count` sites `<prefix><n>.faults.test` to a running site server. */
export function addSites(
  sites: SmallBusinessSites,
  prefix: string,
  count: number,
  delayMs: number,
): string[] {
  const urls: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const host = `${prefix}${i}.faults.test`;
    sites.add(host, {
      "/robots.txt": { body: "User-agent: *\nAllow: /\n", delayMs },
      "/": {
        body: homePage({
          name: `${prefix} ${i} Plumbing`,
          footer: `<p>Call <a href="tel:+15124723391">(512) 472-3391</a></p>`,
        }),
        delayMs,
      },
    });
    urls.push(sites.url(host));
  }
  return urls;
}

/** URLs of `count` leads' registered websites (distinct hosts), from `offset` on. */
export async function leadUrls(db: Db, count: number, offset = 0): Promise<string[]> {
  const rows = await sql<{ url: string }>`
    select min(registered_url) as url from leads
    where registered_url is not null and registered_url like 'http%'
    group by enrichment_url_host(registered_url)
    order by min(id) offset ${offset} limit ${count}`.execute(db);
  return rows.rows.map((r) => r.url);
}

/** Submits a run (`POST /enrichments`, either contact type); its id. */
export async function submitEnrichment(base: string, key: string, urls: string[]): Promise<number> {
  const res = await api(base, key, "POST", "/enrichments", { urls, contactTypes: "either" }, 60_000);
  const id = (res.body.data as { id?: number } | undefined)?.id;
  if (res.status !== 202 || id === undefined)
    throw new Error(`POST /enrichments answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  return id;
}

/** The run record as `GET /enrichments/{id}` answers it. */
export interface RunRecord {
  status: string;
  urls: { total: number; processed: number };
  database: { matched: number; delivered: number; charged: number; free: number; noRequestedContact: number };
  live: { sentToScraper: number; delivered: number; failed: number };
  credits: { databaseCharged: number; liveCharged: number; total: number; final: boolean };
}

export async function runRecord(base: string, key: string, id: number): Promise<RunRecord | undefined> {
  const res = await api(base, key, "GET", `/enrichments/${id}`).catch(() => undefined);
  return res?.status === 200 ? (res.body.data as unknown as RunRecord) : undefined;
}

const ENDED = ["completed", "partial", "failed"];

/** Polls the runs until each has ended (up to `timeoutMs`); the last record of each. */
export async function settleRuns(
  base: string,
  runs: { key: string; id: number }[],
  timeoutMs: number,
): Promise<Map<number, RunRecord | undefined>> {
  const records = new Map<number, RunRecord | undefined>();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const run of runs) records.set(run.id, await runRecord(base, run.key, run.id));
    const open = [...records.values()].filter((r) => !r || !ENDED.includes(r.status));
    if (open.length === 0 || Date.now() > deadline) return records;
    await sleep(1_000);
  }
}

/** Leads the account was charged for through enrichments (its lead export history). */
export async function enrichmentHistoryLeads(db: Db, accountId: number): Promise<number> {
  const res = await sql<{ n: number }>`
    select count(*)::int as n from lead_export_history
    where account_id = ${accountId} and export_method = 'enrichment'`.execute(db);
  return Number(res.rows[0]!.n);
}
