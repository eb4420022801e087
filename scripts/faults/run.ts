import { line, type ScenarioResult } from "./harness.js";
import { apiKilled } from "./api-killed.js";
import { enrichmentWorkerKilled } from "./enrichment-worker-killed.js";
import { postgresOutage } from "./postgres-outage.js";
import { receiverFaults } from "./receiver-faults.js";
import { scheduleWorkerKilled } from "./schedule-worker-killed.js";
import { smtpDown } from "./smtp-down.js";
import { storageFull } from "./storage-full.js";
import { workerKilled } from "./worker-killed.js";

// `npm run faults [-- <scenario> ...]`: runs the fault scenarios (all by default), one line of
// figures each; exits 1 when any lost something, charged wrongly or broke its promise
// (docs/reliability.md).

const SCENARIOS: Record<string, () => Promise<ScenarioResult>> = {
  "worker-killed": workerKilled,
  "postgres-outage": postgresOutage,
  "api-killed": apiKilled,
  "smtp-down": smtpDown,
  "storage-full": storageFull,
  "schedule-worker-killed": scheduleWorkerKilled,
  "enrichment-worker-killed": enrichmentWorkerKilled,
  "receiver-faults": receiverFaults,
};

async function main(): Promise<void> {
  const asked = process.argv.slice(2).filter((a) => !a.startsWith("-"));
  const unknown = asked.filter((name) => !(name in SCENARIOS));
  if (unknown.length) {
    console.error(`unknown scenario(s): ${unknown.join(", ")}; known: ${Object.keys(SCENARIOS).join(", ")}`);
    process.exit(2);
  }
  let failed = false;
  for (const name of asked.length ? asked : Object.keys(SCENARIOS)) {
    const started = Date.now();
    let result: ScenarioResult;
    try {
      result = await SCENARIOS[name]!();
    } catch (err) {
      result = { name, figures: {}, failures: [`crashed: ${(err as Error).stack ?? String(err)}`] };
    }
    result.figures.seconds = Math.round((Date.now() - started) / 1000);
    console.log(line(result));
    if (result.failures.length) failed = true;
  }
  process.exit(failed ? 1 : 0);
}

void main();
