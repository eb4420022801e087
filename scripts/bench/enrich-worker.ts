import { pino } from "pino";
import { createDatabase } from "../../src/db/database.js";
import { processRunSlice, runContext } from "../../src/enrichments/worker/task.js";
import { closePageAgent, Outbound } from "../../src/outbound/index.js";
import { LocalDiskStorage } from "../../src/storage/local-disk.js";

// The worker side of `npm run bench -- enrich`, in a process of its own so its memory is measured
// alone: once started it says `ready`, then processes the run whose id it is sent, slice after
// slice until it is finished, with the default settings. Every host name resolves to 127.0.0.1
// (the bench's local sites).

async function main(): Promise<void> {
  const { db } = createDatabase(process.env.DATABASE_URL ?? "", 8);
  const outbound = new Outbound({ allowPrivate: true, resolve: async () => ["127.0.0.1"] });
  const ctx = runContext({
    db,
    storage: new LocalDiskStorage(process.env.DATA_DIR ?? "/tmp"),
    outbound,
    signingSecret: "bench",
    publicBaseUrl: "http://127.0.0.1",
    logger: pino({ level: "warn" }),
  });
  await db.selectFrom("enrichment_runs").select("id").limit(1).execute();
  const runId = await new Promise<number>((resolve) => {
    process.once("message", (message) => resolve(Number((message as { runId: number }).runId)));
    process.send?.("ready");
  });
  for (let slice = 0; slice < 10_000; slice += 1) {
    if ((await processRunSlice(ctx, runId)) === "finished") break;
  }
  await closePageAgent(outbound);
  outbound.close();
  await db.destroy();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
