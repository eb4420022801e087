import type { ChatModel } from "../chat-model.js";
import { cleanTerms } from "../../keyword-lists/service.js";
import { builtInJudge, type RefineJudge } from "./judge.js";
import { KEYWORD_CHOICE, RELEVANT_LEADS } from "./shapes.js";
import type { SampledLead } from "./sampling.js";

/** Leads judged per model call. */
const LEADS_PER_CALL = 25;
/** Leads shown to the model when it proposes keywords. */
const LEADS_PER_PROPOSAL = 40;
/** Longest keyword the model may propose. */
const MAX_KEYWORD_LENGTH = 60;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

const RELEVANT_SYSTEM = [
  "You check sales leads, US small businesses, against target categories.",
  "You get a JSON object: `categories` (the target categories) and `leads` (each with an id, its",
  "name, website and category names). Answer the ids of the leads whose business belongs to one of",
  "the target categories.",
].join(" ");

const POSITIVE_SYSTEM = [
  "You write search keywords for a database of US small businesses. A keyword matches a business",
  "when it occurs (ignoring case) in its website address, its company name or its category names.",
  "You get a JSON object: `categories` (target categories), `leads` (businesses of those",
  "categories) and `existing` (keywords already used). Answer new short keywords (words or word",
  "stems, lower case) that would find more businesses of the target categories and few others,",
  "best first.",
].join(" ");

const NEGATIVE_SYSTEM = [
  "You write exclusion keywords for a database of US small businesses. A keyword matches a business",
  "when it occurs (ignoring case) in its website address, its company name or its category names.",
  "You get a JSON object: `categories` (target categories), `wrong` (businesses the current keywords",
  "find that are NOT of the target categories), `right` (businesses that are) and `existing`",
  "(exclusion keywords already used). Answer new short exclusion keywords that occur in the wrong",
  "businesses and not in the right ones, best first.",
].join(" ");

function describe(lead: SampledLead): Record<string, unknown> {
  return {
    id: lead.id,
    name: lead.companyName,
    website: lead.website,
    categories: [lead.category, ...lead.aiCategories].filter(Boolean),
  };
}

function cleanKeywords(keywords: readonly string[], max: number): string[] {
  return cleanTerms(
    keywords
      .map((k) => k.trim().toLowerCase())
      .filter((k) => k.length >= 3 && k.length <= MAX_KEYWORD_LENGTH && !CONTROL.test(k)),
  ).slice(0, max);
}

/**
 * The model as the judge of a refinement: it reads the sampled leads (batches of 25) and proposes
 * keywords, within a budget of calls per refinement; past the budget the built-in judgement
 * (category agreement, frequent words) decides the rest, so a refinement's cost is bounded. Each
 * call has the adapter's retries (chat-model.ts); a call that still fails throws
 * AiUnavailableError, which ends the refinement `failed`.
 */
export function modelJudge(
  model: ChatModel,
  budget: number,
  signal?: AbortSignal,
): RefineJudge & { calls(): number } {
  let calls = 0;
  const take = (): boolean => {
    if (calls >= budget) return false;
    calls += 1;
    return true;
  };
  return {
    name: model.name,
    sampleSize: 12,
    judgesByAgreement: false,
    calls: () => calls,
    async relevant(leads, categories) {
      const ids = new Set<number>();
      for (let at = 0; at < leads.length; at += LEADS_PER_CALL) {
        const batch = leads.slice(at, at + LEADS_PER_CALL);
        if (!take()) {
          for (const id of await builtInJudge.relevant(batch, categories)) ids.add(id);
          continue;
        }
        const answer = await model.complete({
          system: RELEVANT_SYSTEM,
          user: JSON.stringify({ categories, leads: batch.map(describe) }),
          shape: RELEVANT_LEADS,
          signal,
        });
        const known = new Set(batch.map((lead) => lead.id));
        for (const id of answer.relevantIds) if (known.has(id)) ids.add(id);
      }
      return ids;
    },
    async proposePositives(relevant, existing, categories, max) {
      if (!take()) return builtInJudge.proposePositives(relevant, existing, categories, max);
      const answer = await model.complete({
        system: POSITIVE_SYSTEM,
        user: JSON.stringify({
          categories,
          leads: relevant.slice(0, LEADS_PER_PROPOSAL).map(describe),
          existing,
        }),
        shape: KEYWORD_CHOICE,
        signal,
      });
      const taken = new Set(existing.map((k) => k.toLowerCase()));
      return cleanKeywords(answer.keywords, max * 2)
        .filter((k) => !taken.has(k))
        .slice(0, max);
    },
    async proposeNegatives(irrelevant, relevant, existing, categories, max) {
      if (!take()) return builtInJudge.proposeNegatives(irrelevant, relevant, existing, categories, max);
      const answer = await model.complete({
        system: NEGATIVE_SYSTEM,
        user: JSON.stringify({
          categories,
          wrong: irrelevant.slice(0, LEADS_PER_PROPOSAL * 2).map(describe),
          right: relevant.slice(0, LEADS_PER_PROPOSAL / 2).map(describe),
          existing,
        }),
        shape: KEYWORD_CHOICE,
        signal,
      });
      const taken = new Set(existing.map((k) => k.toLowerCase()));
      return cleanKeywords(answer.keywords, max * 2)
        .filter((k) => !taken.has(k))
        .slice(0, max);
    },
  };
}
