import type { SampledLead } from "./sampling.js";
import { coveredBy, frequentWords } from "./words.js";

/**
 * Who decides, during a refinement, which sampled leads belong to the source categories and which
 * words to try as keywords: the built-in engine (PostgreSQL's category agreement, frequent words)
 * or the configured AI model (model-judge.ts).
 */
export interface RefineJudge {
  /** `built-in` or the model's name. */
  readonly name: string;
  /** Leads sampled per keyword checked (the model reads each one, so it gets fewer). */
  readonly sampleSize: number;
  /** Whether a sample can be narrowed to disagreeing leads in SQL (the built-in judgement). */
  readonly judgesByAgreement: boolean;
  /** The ids of the sampled leads that belong to the source categories. */
  relevant(leads: readonly SampledLead[], categories: readonly string[]): Promise<Set<number>>;
  /** New positive keyword candidates from leads of the source categories, best first. */
  proposePositives(
    relevant: readonly SampledLead[],
    existing: readonly string[],
    categories: readonly string[],
    max: number,
  ): Promise<string[]>;
  /** New negative keyword candidates from leads the positives find wrongly, best first. */
  proposeNegatives(
    irrelevant: readonly SampledLead[],
    relevant: readonly SampledLead[],
    existing: readonly string[],
    categories: readonly string[],
    max: number,
  ): Promise<string[]>;
}

/** A negative candidate may be held by at most this share of the relevant leads. */
const NEGATIVE_RELEVANT_SHARE = 0.05;
/** A candidate must be held by at least this many sampled leads. */
const MIN_HOLDERS = 2;

/**
 * The built-in judge: a lead belongs to the source categories when its AI categories or its
 * category name are among them (computed in SQL with the sample: `agrees`); candidates are the
 * frequent words of agreeing leads (positives) and of disagreeing leads that agreeing leads
 * rarely hold (negatives).
 */
export const builtInJudge: RefineJudge = {
  name: "built-in",
  sampleSize: 100,
  judgesByAgreement: true,
  relevant(leads) {
    return Promise.resolve(new Set(leads.filter((lead) => lead.agrees).map((lead) => lead.id)));
  },
  proposePositives(relevant, existing, _categories, max) {
    const words = frequentWords(relevant)
      .filter((w) => w.leads >= MIN_HOLDERS && !coveredBy(w.word, existing))
      .map((w) => w.word);
    return Promise.resolve(words.slice(0, max));
  },
  proposeNegatives(irrelevant, relevant, existing, _categories, max) {
    const inRelevant = new Map(frequentWords(relevant).map((w) => [w.word, w.leads]));
    const limit = Math.max(1, relevant.length * NEGATIVE_RELEVANT_SHARE);
    const words = frequentWords(irrelevant)
      .filter(
        (w) =>
          w.leads >= MIN_HOLDERS && (inRelevant.get(w.word) ?? 0) < limit && !coveredBy(w.word, existing),
      )
      .map((w) => w.word);
    return Promise.resolve(words.slice(0, max));
  },
};
