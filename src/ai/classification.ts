import { sql } from "kysely";
import type { Db } from "../db/database.js";
import type { AiEngine } from "./engine.js";
import type { LeadToClassify } from "./inputs.js";

/** Leads per batch: small, so each transaction is short and search never waits long on it. */
export const CLASSIFY_BATCH_SIZE = 100;
/** A lead no category fitted is tried again after this long (the catalogue may have grown). */
const RETRY_UNCLASSIFIED_MS = 7 * 24 * 3_600_000;

/** What one batch did. */
export interface BatchOutcome {
  /** Leads read (0: no unclassified lead left after the cursor; the cursor went back to the start). */
  examined: number;
  /** Leads given categories. */
  classified: number;
}

/**
 * Classifies the next batch of leads without `ai_category_estimation` (walking them by id from the
 * stored cursor, through the partial index of unclassified leads): the engine gives each 1 to 3
 * catalogue names, written only where the lead is still unclassified (an import may have set
 * them meanwhile); leads nothing fitted are remembered and skipped for a week. At the end of the
 * leads the cursor starts again from the beginning, so leads imported later are found.
 * @throws AiUnavailableError when the model fails (nothing written; the batch is tried again)
 */
export async function classifyNextBatch(
  db: Db,
  engine: AiEngine,
  options: { batchSize?: number; signal?: AbortSignal } = {},
): Promise<BatchOutcome> {
  const batchSize = options.batchSize ?? CLASSIFY_BATCH_SIZE;
  const state = await db.selectFrom("ai_classification_state").select("last_lead_id").executeTakeFirst();
  const cursor = state?.last_lead_id ?? 0;
  const retryBefore = new Date(Date.now() - RETRY_UNCLASSIFIED_MS);
  const rows = await db
    .selectFrom("leads")
    .select(["id", "company_name", "category", "description"])
    .where("ai_category_estimation", "is", null)
    .where("id", ">", cursor)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("ai_unclassified_leads")
            .select("lead_id")
            .whereRef("ai_unclassified_leads.lead_id", "=", "leads.id")
            .where("attempted_at", ">", retryBefore),
        ),
      ),
    )
    .orderBy("id")
    .limit(batchSize)
    .execute();
  if (rows.length === 0) {
    if (cursor > 0) await db.updateTable("ai_classification_state").set({ last_lead_id: 0 }).execute();
    return { examined: 0, classified: 0 };
  }
  const leads: LeadToClassify[] = rows.map((row) => ({
    id: row.id,
    companyName: row.company_name,
    category: row.category,
    description: row.description,
  }));
  const categories = await engine.classifyLeads(leads, options.signal);
  const classified = [...categories].map(([id, names]) => ({ id, names }));
  const unclassified = leads.filter((lead) => !categories.has(lead.id)).map((lead) => lead.id);
  const lastId = rows[rows.length - 1]!.id;
  await db.transaction().execute(async (trx) => {
    if (classified.length > 0) {
      await sql`
        update leads as l
        set ai_category_estimation = array(select jsonb_array_elements_text(v.names))
        from jsonb_to_recordset(${JSON.stringify(classified)}::jsonb) as v(id integer, names jsonb)
        where l.id = v.id and l.ai_category_estimation is null`.execute(trx);
      await trx
        .deleteFrom("ai_unclassified_leads")
        .where(
          "lead_id",
          "in",
          classified.map((c) => c.id),
        )
        .execute();
    }
    if (unclassified.length > 0) {
      await sql`
        insert into ai_unclassified_leads (lead_id, attempted_at)
        select id, now() from unnest(${unclassified}::int[]) as id
        on conflict (lead_id) do update set attempted_at = excluded.attempted_at`.execute(trx);
    }
    await trx.updateTable("ai_classification_state").set({ last_lead_id: lastId }).execute();
  });
  return { examined: rows.length, classified: classified.length };
}

/**
 * Classifies batches until none is left, `budgetMs` has passed or `signal` aborts. After each
 * batch it pauses `idleFactor` times as long as the batch took (at least `pauseMs`), so the
 * classification uses a bounded share of the database's time and search keeps the CPU and the
 * disk it needs (docs/performance.md).
 */
export async function classifyPendingLeads(
  db: Db,
  engine: AiEngine,
  options: {
    budgetMs: number;
    pauseMs: number;
    idleFactor?: number;
    batchSize?: number;
    signal?: AbortSignal;
  },
): Promise<{ examined: number; classified: number }> {
  const started = Date.now();
  const total = { examined: 0, classified: 0 };
  while (Date.now() - started < options.budgetMs && !options.signal?.aborted) {
    const batchStarted = Date.now();
    const outcome = await classifyNextBatch(db, engine, options);
    total.examined += outcome.examined;
    total.classified += outcome.classified;
    if (outcome.examined === 0) break;
    const pause = Math.max(options.pauseMs, (Date.now() - batchStarted) * (options.idleFactor ?? 0));
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  return total;
}
