import { parseArgs } from "node:util";
import { sql } from "kysely";
import { generateLeads } from "../leads/import/generate.js";
import { importLeadFile, importLeadRecords, type LeadImportOptions } from "../leads/import/importer.js";
import { writeNdjsonFile } from "../leads/import/ndjson-file.js";
import { orderSearchTableByState } from "../db/search-table-order.js";
import type { AdminCommand } from "./command.js";

/** Most leads one `generate-leads` makes. */
export const MAX_GENERATED_LEADS = 5_000_000;

function integerOption(
  value: string | undefined,
  name: string,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new Error(`--${name} must be an integer from ${min} to ${max}`);
  }
  return n;
}

/** `--batch-size` and `--concurrency`, shared by both commands (for tuning and benchmarks). */
const TUNING = { "batch-size": { type: "string" }, concurrency: { type: "string" } } as const;

function tuning(values: { "batch-size"?: string; concurrency?: string }): LeadImportOptions {
  return {
    batchSize: integerOption(values["batch-size"], "batch-size", 1, 10_000),
    concurrency: integerOption(values.concurrency, "concurrency", 1, 16),
  };
}

/** Admin commands of the lead database (import-leads, generate-leads, order-search-table). */
export const adminLeadCommands: Record<string, AdminCommand> = {
  /** `import-leads FILE [--batch-size N] [--concurrency N]`: NDJSON or CSV, streamed. */
  "import-leads": async (args, db) => {
    const { values, positionals } = parseArgs({ args, options: TUNING, allowPositionals: true });
    const [file, ...rest] = positionals;
    if (!file || rest.length > 0) throw new Error("import-leads needs exactly one FILE (NDJSON or CSV)");
    return importLeadFile(db, file, tuning(values));
  },

  /**
   * `generate-leads --count N [--seed S] [--out FILE]`: synthetic leads, the same for the same
   * seed; into the database through the importer, or as an NDJSON file `import-leads` reads.
   */
  "generate-leads": async (args, db) => {
    const { values } = parseArgs({
      args,
      options: { count: { type: "string" }, seed: { type: "string" }, out: { type: "string" }, ...TUNING },
    });
    const count = integerOption(values.count, "count", 1, MAX_GENERATED_LEADS);
    if (count === undefined) throw new Error("generate-leads needs --count N");
    const seed = integerOption(values.seed, "seed", 0, 0xffffffff) ?? 1;
    if (values.out !== undefined) {
      if (values.out.trim() === "") throw new Error("--out needs a file name");
      await writeNdjsonFile(values.out, generateLeads(count, seed));
      return { generated: count, file: values.out };
    }
    const result = await importLeadRecords(db, generateLeads(count, seed), tuning(values));
    if (result.rejected > 0) {
      throw new Error(`generated leads were refused: ${JSON.stringify(result.errors.slice(0, 3))}`);
    }
    return { generated: count, imported: result.imported, updated: result.updated, seed };
  },

  /**
   * `order-search-table`: rewrites the search table in state order (orderSearchTableByState), for
   * after a large import; searches and lead writes wait while it runs.
   */
  "order-search-table": async (args, db) => {
    const { positionals } = parseArgs({ args, options: {}, allowPositionals: true });
    if (positionals.length > 0) throw new Error("order-search-table takes no arguments");
    const started = performance.now();
    await db.transaction().execute((trx) => orderSearchTableByState(trx));
    const seconds = Number(((performance.now() - started) / 1000).toFixed(1));
    // The rewritten table written out now (needs superuser or pg_checkpoint; skipped without),
    // not by a checkpoint that later commits wait behind.
    await sql`checkpoint`.execute(db).catch(() => undefined);
    // Counted after the commit, so the count does not hold the lock.
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from lead_search`.execute(db);
    return { ordered: rows[0]?.n ?? 0, seconds };
  },
};
