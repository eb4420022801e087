import { randomUUID } from "node:crypto";
import { sql, type Selectable } from "kysely";
import type { DbOrTrx, Trx } from "../db/database.js";
import type { AiKeywordGenerationsTable, StoredGeneratedList } from "../db/schema/ai.js";

/** Where a keyword generation stands. */
export type GenerationStatus = "pending" | "running" | "completed" | "failed";

/** A keyword generation (domain shape, not a row). */
export interface KeywordGeneration {
  id: string;
  accountId: number;
  status: GenerationStatus;
  sourceCategories: string[];
  keywordLists: StoredGeneratedList[];
  error: string | null;
  createdAt: Date;
  completedAt: Date | null;
}

function toGeneration(row: Selectable<AiKeywordGenerationsTable>): KeywordGeneration {
  return {
    id: row.id,
    accountId: row.account_id,
    status: row.status,
    sourceCategories: row.source_categories,
    keywordLists: row.keyword_lists,
    error: row.error,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}

/** Saves the account's target categories (replacing them). */
export async function saveTargetCategories(
  db: DbOrTrx,
  accountId: number,
  categories: string[],
): Promise<void> {
  await db
    .updateTable("accounts")
    .set({ target_categories: categories, updated_at: new Date() })
    .where("id", "=", accountId)
    .execute();
}

/** What keyword generation reads of an account. */
export interface AccountTargeting {
  targetCategories: string[];
  targetLocations: string[];
  companyName: string | null;
  companyWebsite: string | null;
}

export async function findAccountTargeting(
  db: DbOrTrx,
  accountId: number,
): Promise<AccountTargeting | undefined> {
  const row = await db
    .selectFrom("accounts")
    .select(["target_categories", "target_locations", "company_name", "company_website"])
    .where("id", "=", accountId)
    .executeTakeFirst();
  return (
    row && {
      targetCategories: row.target_categories,
      targetLocations: row.target_locations,
      companyName: row.company_name,
      companyWebsite: row.company_website,
    }
  );
}

/**
 * Marks the account's pending or running generation older than `staleBefore` failed (its worker
 * is gone), so it no longer blocks new ones.
 */
export async function failAbandonedGenerations(
  trx: Trx,
  accountId: number,
  staleBefore: Date,
): Promise<void> {
  await trx
    .updateTable("ai_keyword_generations")
    .set({ status: "failed", error: "The generation did not finish in time.", completed_at: new Date() })
    .where("account_id", "=", accountId)
    .where("status", "in", ["pending", "running"])
    .where("created_at", "<", staleBefore)
    .execute();
}

/**
 * A new pending generation of the account, or (when one is pending or running: the partial
 * unique index allows one) that one, with `created: false`.
 */
export async function insertGenerationUnlessActive(
  trx: Trx,
  accountId: number,
  sourceCategories: string[],
): Promise<{ generation: KeywordGeneration; created: boolean }> {
  const row = await trx
    .insertInto("ai_keyword_generations")
    .values({
      id: randomUUID(),
      account_id: accountId,
      status: "pending",
      source_categories: sourceCategories,
    })
    .onConflict((oc) =>
      oc
        .column("account_id")
        .where(sql<boolean>`status in ('pending', 'running')`)
        .doNothing(),
    )
    .returningAll()
    .executeTakeFirst();
  if (row) return { generation: toGeneration(row), created: true };
  const active = await trx
    .selectFrom("ai_keyword_generations")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("status", "in", ["pending", "running"])
    .executeTakeFirstOrThrow();
  return { generation: toGeneration(active), created: false };
}

/** Marks a pending generation running; the generation when it is pending or running. */
export async function startGeneration(db: DbOrTrx, id: string): Promise<KeywordGeneration | undefined> {
  const row = await db
    .updateTable("ai_keyword_generations")
    .set({ status: "running", started_at: sql`coalesce(started_at, now())` })
    .where("id", "=", id)
    .where("status", "in", ["pending", "running"])
    .returningAll()
    .executeTakeFirst();
  return row && toGeneration(row);
}

/** Locks a running generation (the transaction that finishes it); undefined when it is not running. */
export async function lockRunningGeneration(trx: Trx, id: string): Promise<KeywordGeneration | undefined> {
  const row = await trx
    .selectFrom("ai_keyword_generations")
    .selectAll()
    .where("id", "=", id)
    .where("status", "=", "running")
    .forUpdate()
    .executeTakeFirst();
  return row && toGeneration(row);
}

export async function completeGeneration(trx: Trx, id: string, lists: StoredGeneratedList[]): Promise<void> {
  await trx
    .updateTable("ai_keyword_generations")
    .set({ status: "completed", keyword_lists: JSON.stringify(lists), completed_at: new Date() })
    .where("id", "=", id)
    .execute();
}

/** Marks a pending or running generation failed. */
export async function failGeneration(db: DbOrTrx, id: string, error: string): Promise<void> {
  await db
    .updateTable("ai_keyword_generations")
    .set({ status: "failed", error, completed_at: new Date() })
    .where("id", "=", id)
    .where("status", "in", ["pending", "running"])
    .execute();
}

/** The account's generations created since `since`, newest first, at most `limit`. */
export async function listGenerations(
  db: DbOrTrx,
  accountId: number,
  since: Date,
  limit: number,
): Promise<KeywordGeneration[]> {
  const rows = await db
    .selectFrom("ai_keyword_generations")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("created_at", ">=", since)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
  return rows.map(toGeneration);
}
