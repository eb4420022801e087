import { benchAi } from "./ai.js";
import { benchAutoRefine } from "./auto-refine.js";
import { benchDashboard } from "./dashboard.js";
import { benchDatabase } from "./lib.js";
import { benchEnrich } from "./enrich.js";
import { benchExport } from "./export.js";
import { benchExportS3 } from "./export-s3.js";
import { benchFiles } from "./files.js";
import { benchImport } from "./import.js";
import { benchMe } from "./me.js";
import { benchRefresh } from "./refresh.js";
import { benchSchedules } from "./schedules.js";
import { benchSearch } from "./search.js";
import { benchWebhooks } from "./webhooks.js";

/** `npm run bench [-- me]`: runs the named benchmarks (all by default) and prints their figures. */
async function main(): Promise<void> {
  const wanted = new Set(process.argv.slice(2));
  const all: Record<string, (url: string) => Promise<Record<string, unknown>>> = {
    me: benchMe,
    files: benchFiles,
    import: benchImport,
    search: benchSearch,
    export: benchExport,
    "export-s3": benchExportS3,
    webhooks: benchWebhooks,
    ai: benchAi,
    "auto-refine": benchAutoRefine,
    schedules: benchSchedules,
    enrich: benchEnrich,
    refresh: benchRefresh,
    dashboard: benchDashboard,
  };
  const database = await benchDatabase();
  try {
    for (const [name, bench] of Object.entries(all)) {
      if (wanted.size > 0 && !wanted.has(name)) continue;
      const result = await bench(database.url);
      console.log(JSON.stringify({ bench: name, ...result }, null, 2));
    }
  } finally {
    await database.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
