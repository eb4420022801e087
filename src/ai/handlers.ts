import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";
import { runLongRunning, type LongRunningDeps } from "../jobs/index.js";
import { cleanTerms } from "../keyword-lists/service.js";
import { recentGenerations, requestGeneration } from "./keyword-generation.js";
import { toKeywordGenerationBody } from "./presenter.js";
import { suggestCategoriesJob } from "./suggest-job.js";

/** `POST /ai/suggest-categories` (a job), `POST /ai/generate-keywords`, `GET /ai/keyword-status`. */
export function aiHandlers(
  deps: LongRunningDeps & { db: Db },
): Handlers<"suggestCategories" | "generateKeywords" | "getKeywordStatus"> {
  const { db } = deps;
  return {
    async suggestCategories(request) {
      const { body } = request;
      const website = body.companyWebsite?.trim();
      return runLongRunning(request, deps, {
        kind: suggestCategoriesJob,
        accountId: request.caller.accountId,
        input: {
          companyName: body.companyName.trim(),
          companyDescription: body.companyDescription.trim(),
          productService: body.productService.trim(),
          companyWebsite: website ? website : null,
          excludeCategories: cleanTerms(body.excludeCategories ?? []),
        },
      });
    },
    async generateKeywords({ caller }) {
      const accepted = await requestGeneration(db, caller.accountId);
      return { status: 202, body: { data: accepted } };
    },
    async getKeywordStatus({ caller, query }) {
      const jobs = (await recentGenerations(db, caller.accountId)).map(toKeywordGenerationBody);
      // `shape=list`: the bare array this operation answered before 2026-11-27 (docs/ai.md).
      if (query.shape === "list") return { status: 200, body: { data: jobs } };
      return { status: 200, body: { data: { hasJobs: jobs.length > 0, jobs } } };
    },
  };
}
