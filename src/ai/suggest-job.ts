import { errors } from "../http/errors.js";
import { defineJobKind, JOB_LIFETIMES, type JobAnswerOf, type JobContext } from "../jobs/index.js";
import { AiUnavailableError } from "./errors.js";
import { saveTargetCategories } from "./repository.js";
import { readWebsite } from "./website.js";

/** Running suggestions per account (openapi.yaml, suggestCategories); one more: 429 `job_capacity_busy`. */
export const SUGGEST_JOB_CAPACITY = 3;
/** Seconds a client waits before asking again after the model failed (503 `service_unavailable`). */
const RETRY_AFTER_SECONDS = 30;

/** What a suggestion job runs on (stored with the job; checked again when it runs). */
export interface SuggestInput {
  companyName: string;
  companyDescription: string;
  productService: string;
  companyWebsite: string | null;
  excludeCategories: string[];
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === "string");
}

/** The stored input of a suggestion job; throws on anything else (queued jobs outlive code). */
export function parseSuggestInput(raw: unknown): SuggestInput {
  const input = raw as Partial<Record<keyof SuggestInput, unknown>> | null;
  if (
    !input ||
    typeof input.companyName !== "string" ||
    typeof input.companyDescription !== "string" ||
    typeof input.productService !== "string" ||
    (input.companyWebsite !== null && typeof input.companyWebsite !== "string") ||
    !isStringArray(input.excludeCategories)
  ) {
    throw new Error("invalid ai_suggest_categories input");
  }
  return {
    companyName: input.companyName,
    companyDescription: input.companyDescription,
    productService: input.productService,
    companyWebsite: input.companyWebsite,
    excludeCategories: input.excludeCategories,
  };
}

/**
 * Reads the website (when given), asks the engine for 4-12 categories and saves them as the
 * account's target categories in the transaction that stores the answer, so a run again after a
 * crash changes nothing twice. The model failing answers 503 `service_unavailable` (it does not use
 * the Idempotency-Key up) and changes nothing.
 */
export async function runSuggestion(
  input: SuggestInput,
  job: JobContext,
): Promise<JobAnswerOf<"suggestCategories">> {
  const ai = job.services.ai;
  if (!ai) throw new Error("the AI services are not wired into this worker");
  await job.progress({ phase: input.companyWebsite ? "reading_website" : "ranking", done: 0, total: 0 });
  const website = input.companyWebsite
    ? await readWebsite(ai.outbound, input.companyWebsite, job.signal)
    : null;
  if (website && !website.ok) job.logger.info({ reason: website.reason }, "website analysis failed");
  await job.progress({ phase: "ranking", done: 0, total: 0 });
  let categories: string[];
  try {
    categories = await ai.engine.suggestCategories(
      {
        companyName: input.companyName,
        companyDescription: input.companyDescription,
        productService: input.productService,
        websiteText: website?.ok ? website.text : null,
      },
      input.excludeCategories,
      job.signal,
    );
  } catch (err) {
    if (err instanceof AiUnavailableError) {
      job.logger.warn({ failure: err.failure, model: ai.engine.backEnd }, "category suggestion failed");
      throw errors.serviceUnavailable(`${err.message} Try again later.`, RETRY_AFTER_SECONDS);
    }
    throw err;
  }
  const answer: JobAnswerOf<"suggestCategories"> = {
    status: 200,
    body: { data: { categories, websiteAnalysisFailed: website !== null && !website.ok } },
  };
  await job.db.transaction().execute(async (trx) => {
    await saveTargetCategories(trx, job.accountId, categories);
    await job.commit(trx, answer);
  });
  return answer;
}

/**
 * The `ai_suggest_categories` job of `POST /ai/suggest-categories`. Imported by
 * src/worker/worker.ts too, so worker processes find it by name.
 */
export const suggestCategoriesJob = defineJobKind<SuggestInput, "suggestCategories">({
  kind: "ai_suggest_categories",
  operation: "suggestCategories",
  capacity: SUGGEST_JOB_CAPACITY,
  timeoutMs: 5 * 60_000,
  ...JOB_LIFETIMES.standard,
  parseInput: parseSuggestInput,
  run: runSuggestion,
});
