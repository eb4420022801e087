import { sql } from "kysely";
import { checkMoney } from "./counting.js";
import {
  addSites,
  enrichmentHistoryLeads,
  leadUrls,
  loopbackDnsEnv,
  settleRuns,
  submitEnrichment,
} from "./enrichments.js";
import { newAccount, sleep, startService, type ScenarioResult } from "./harness.js";
import { startSmallBusinessSites } from "../../test/helpers/small-business-sites.js";

// Scenario 2b (issue 36): the worker killed (SIGKILL) in the middle of enrichment runs, then
// started again. Two accounts each submit a run of lead websites (matched in the database and
// charged a credit each) and local websites answering slowly (read live, 0.1 credit a result);
// the worker is killed once the runs are fetching live, with database matches charged and sites
// in flight. The runs are taken over after their lease goes stale (2 minutes; the sweep runs every
// minute) and finish: each with `credits.final`, every site delivered, each lead charged once (the
// ledger equals the lead export history plus the live results), nothing charged twice.

const DATABASE_URLS = [1_500, 1_000];
const SITES = 250;
/** Each page of a site answers after this long, so a run is still fetching when the worker dies. */
const SITE_DELAY_MS = 1_500;

export async function enrichmentWorkerKilled(): Promise<ScenarioResult> {
  const sites = await startSmallBusinessSites();
  const service = await startService({ leads: 6_000, env: loopbackDnsEnv() });
  try {
    const runs: { key: string; id: number; accountId: number; databaseUrls: number; hosts: string[] }[] = [];
    let offset = 0;
    for (let a = 0; a < DATABASE_URLS.length; a += 1) {
      const account = await newAccount(service.db, `ewk${a}`);
      const databaseUrls = await leadUrls(service.db, DATABASE_URLS[a]!, offset);
      offset += DATABASE_URLS[a]!;
      const siteUrls = addSites(sites, `ewk${a}-`, SITES, SITE_DELAY_MS);
      const id = await submitEnrichment(service.base, account.apiKey, [...databaseUrls, ...siteUrls]);
      runs.push({
        key: account.apiKey,
        id,
        accountId: account.accountId,
        databaseUrls: databaseUrls.length,
        hosts: siteUrls.map((u) => new URL(u).hostname),
      });
    }
    const ids = runs.map((r) => r.id);
    const progress = async () =>
      (
        await sql<{ status: string; live_sent: number; db_charged: number }>`
          select status, live_sent, db_charged from enrichment_runs where id = any(${ids}::int[])
          order by id`.execute(service.db)
      ).rows;
    // Kill once a run is fetching live with outcomes written and sites still in flight.
    const deadline = Date.now() + 60_000;
    let atKill = await progress();
    while (Date.now() < deadline && !atKill.some((r) => r.status === "scraping" && Number(r.live_sent) > 0)) {
      await sleep(50);
      atKill = await progress();
    }
    await service.worker.kill();
    const killedAt = Date.now();
    await sleep(1_000);
    await service.worker.restart();
    const records = await settleRuns(service.base, runs, 300_000);
    const finishedSeconds = Math.round((Date.now() - killedAt) / 1000);

    const failures: string[] = [];
    let databaseCharged = 0;
    let databaseNoContact = 0;
    let liveDelivered = 0;
    let refetched = 0;
    for (const run of runs) {
      const record = records.get(run.id);
      if (!record) {
        failures.push(`run ${run.id} could not be read`);
        continue;
      }
      if (record.status !== "completed") failures.push(`run ${run.id} ended ${record.status}`);
      if (!record.credits.final) failures.push(`run ${run.id} has no final credits`);
      if (record.urls.processed !== record.urls.total)
        failures.push(`run ${run.id} processed ${record.urls.processed} of ${record.urls.total}`);
      // Every lead website matched; those with a phone or an e-mail delivered and charged.
      if (record.database.matched !== run.databaseUrls)
        failures.push(
          `run ${run.id} matched ${record.database.matched} of ${run.databaseUrls} lead websites`,
        );
      if (record.database.charged + record.database.noRequestedContact !== run.databaseUrls)
        failures.push(
          `run ${run.id}: ${record.database.charged} charged + ${record.database.noRequestedContact} without contact, ${run.databaseUrls} matched`,
        );
      if (record.live.delivered !== SITES)
        failures.push(`run ${run.id} delivered ${record.live.delivered} of ${SITES} sites`);
      const history = await enrichmentHistoryLeads(service.db, run.accountId);
      if (history !== record.database.charged)
        failures.push(`run ${run.id}: ${history} leads in the history, ${record.database.charged} charged`);
      databaseCharged += record.database.charged;
      databaseNoContact += record.database.noRequestedContact;
      liveDelivered += record.live.delivered;
      for (const host of run.hosts)
        refetched += Math.max(0, sites.hits(host).filter((p) => p === "/").length - 1);
    }
    const money = await checkMoney(
      service.db,
      runs.map((r) => r.accountId),
    );
    failures.push(...money.wrong);
    return {
      name: "enrichment-worker-killed",
      figures: {
        kills: 1,
        atKill: atKill.map((r) => `${r.status}/live${r.live_sent}/db${r.db_charged}`).join(";"),
        runs: runs.length,
        completed: [...records.values()].filter((r) => r?.status === "completed").length,
        creditsFinal: [...records.values()].filter((r) => r?.credits.final).length,
        databaseCharged,
        databaseNoContact,
        liveDelivered,
        sitesRefetched: refetched,
        finishedSecondsAfterKill: finishedSeconds,
        charged: money.chargedTenths / 10,
        expectedCharge: money.expectedTenths / 10,
      },
      failures,
    };
  } finally {
    await service.close();
    await sites.close();
  }
}
