import type { DbOrTrx } from "../../db/database.js";
import { cleanTerms } from "../../keyword-lists/service.js";
import type { RefineJudge } from "./judge.js";
import { sampleAgreeing, sampleMatching, type SampledLead } from "./sampling.js";
import { frequentWords, keywordParts } from "./words.js";

// One round of a refinement (docs/ai.md, auto-refine): the documented passes over the lead
// database, then the quality score.

/** A positive keyword is kept when at least this share of the leads it finds is relevant. */
export const POSITIVE_THRESHOLD = 0.5;
/** A negative keyword is dropped when at least this share of the leads it removes is relevant. */
export const NEGATIVE_THRESHOLD = 0.4;
/** Variations tried for a positive keyword that fails. */
export const VARIATION_ATTEMPTS = 2;
/** New keywords a round adds at most. */
export const MAX_NEW_POSITIVES = 15;
export const MAX_NEW_NEGATIVES = 5;
/** Leads sampled to discover negatives. */
export const NEGATIVE_DISCOVERY_SAMPLE = 80;
/** Leads of the source categories sampled for candidate words. */
const AGREEING_SAMPLE = 300;
/** A candidate keyword needs at least this many sampled matches to be judged. */
const MIN_SUPPORT = 3;
/**
 * A variation of a failing keyword is a word at least this share of the sampled source-category
 * leads hold: a trade's word (`plumbing`), not one business's name or web address run together
 * (`summitplumbingdrain`), which would find a handful of leads.
 */
const MIN_VARIATION_SHARE = 0.02;
/** Candidates judged per discovery, at most. */
const CANDIDATES = 30;
/** Keywords a list keeps at most. */
export const MAX_LIST_KEYWORDS = 50;
/** Independent samples of the final score (their median). */
const SCORE_SAMPLES = 3;

/** What a round works on. */
export interface RoundInput {
  positives: string[];
  negatives: string[];
  /** Lower-cased source categories (1 to 3). */
  categories: string[];
  /** The refinement has a positive list (to rewrite), a negative list. */
  hasPositiveList: boolean;
  hasNegativeList: boolean;
}

/** What a round gives. */
export interface RoundResult {
  positives: string[];
  negatives: string[];
  score: number;
  reasoning: string;
}

/** Runs between passes: throws to stop the round (the refinement was disabled or ended). */
export type Checkpoint = () => Promise<void>;

/** The share of `leads` the judge holds relevant (0 for none). */
async function relevantShare(
  judge: RefineJudge,
  leads: readonly SampledLead[],
  categories: readonly string[],
): Promise<{ share: number; relevant: Set<number> }> {
  if (leads.length === 0) return { share: 0, relevant: new Set() };
  const relevant = await judge.relevant(leads, categories);
  return { share: relevant.size / leads.length, relevant };
}

/** Runs one round of the passes. */
export async function refineRound(
  db: DbOrTrx,
  judge: RefineJudge,
  input: RoundInput,
  checkpoint: Checkpoint,
): Promise<RoundResult> {
  const { categories } = input;
  const notes: string[] = [];
  const agreeing = await sampleAgreeing(db, categories, AGREEING_SAMPLE);
  const judgedRelevant = new Map<number, SampledLead>();
  const precision = async (keyword: string, negatives: readonly string[]) => {
    const sample = await sampleMatching(db, {
      include: [keyword],
      exclude: negatives,
      categories,
      limit: judge.sampleSize,
    });
    const judged = await relevantShare(judge, sample, categories);
    for (const lead of sample) if (judged.relevant.has(lead.id)) judgedRelevant.set(lead.id, lead);
    return { share: judged.share, support: sample.length };
  };

  // Pass 1: validate the positives (with up to 2 variations of each that fails).
  let positives = input.positives;
  if (input.hasPositiveList) {
    const kept: string[] = [];
    let dropped = 0;
    let varied = 0;
    const common = Math.max(MIN_SUPPORT, Math.ceil(agreeing.length * MIN_VARIATION_SHARE));
    const words = frequentWords(agreeing)
      .filter((w) => w.leads >= common)
      .map((w) => w.word);
    for (const keyword of input.positives) {
      const { share } = await precision(keyword, input.negatives);
      if (share >= POSITIVE_THRESHOLD) {
        kept.push(keyword);
        continue;
      }
      dropped += 1;
      const stem = keywordParts(keyword).sort((a, b) => b.length - a.length)[0] ?? "";
      const variations = words
        .filter((w) => stem.length > 0 && w !== stem && w.includes(stem) && !kept.includes(w))
        .slice(0, VARIATION_ATTEMPTS);
      for (const variation of variations) {
        const tried = await precision(variation, input.negatives);
        if (tried.share >= POSITIVE_THRESHOLD && tried.support >= MIN_SUPPORT) {
          kept.push(variation);
          varied += 1;
        }
      }
    }
    await checkpoint();

    // Pass 1B: discover new positives.
    const pool = [...agreeing, ...judgedRelevant.values()];
    const candidates = await judge.proposePositives(pool, kept, categories, CANDIDATES);
    const added: string[] = [];
    for (const candidate of candidates) {
      if (added.length >= MAX_NEW_POSITIVES || kept.length + added.length >= MAX_LIST_KEYWORDS) break;
      const { share, support } = await precision(candidate, input.negatives);
      if (share >= POSITIVE_THRESHOLD && support >= MIN_SUPPORT) added.push(candidate);
    }
    positives = cleanTerms([...kept, ...added]).slice(0, MAX_LIST_KEYWORDS);
    if (positives.length === 0) {
      positives = input.positives;
      notes.push(`no positive keyword reached ${POSITIVE_THRESHOLD * 100}% relevance; the list was kept`);
    } else {
      notes.push(
        `positives: kept ${input.positives.length - dropped} of ${input.positives.length}` +
          (varied > 0 ? `, ${varied} variations` : "") +
          `, added ${added.length}`,
      );
    }
    await checkpoint();
  }

  // Pass 2: check the negatives for collateral damage.
  let negatives = input.negatives;
  if (input.hasNegativeList) {
    const kept: string[] = [];
    for (const keyword of input.negatives) {
      const sample = await sampleMatching(db, {
        include: positives.length > 0 ? positives : [keyword],
        also: positives.length > 0 ? [keyword] : undefined,
        categories,
        limit: judge.sampleSize,
      });
      const { share } = await relevantShare(judge, sample, categories);
      if (sample.length < MIN_SUPPORT || share < NEGATIVE_THRESHOLD) kept.push(keyword);
    }
    await checkpoint();

    // Pass 2B: discover negatives from sampled leads the positives find.
    const added: string[] = [];
    if (positives.length > 0) {
      const sample = await sampleMatching(db, {
        include: positives,
        exclude: kept,
        categories,
        limit: NEGATIVE_DISCOVERY_SAMPLE,
        agreeing: judge.judgesByAgreement ? false : undefined,
      });
      const relevant = await judge.relevant(sample, categories);
      const wrong = sample.filter((lead) => !relevant.has(lead.id));
      const right = [...agreeing, ...sample.filter((lead) => relevant.has(lead.id))];
      const candidates =
        wrong.length > 0 ? await judge.proposeNegatives(wrong, right, kept, categories, CANDIDATES) : [];
      for (const candidate of candidates) {
        if (added.length >= MAX_NEW_NEGATIVES || kept.length + added.length >= MAX_LIST_KEYWORDS) break;
        if (positives.some((p) => p.toLowerCase() === candidate)) continue;
        const removed = await sampleMatching(db, {
          include: positives,
          also: [candidate],
          categories,
          limit: judge.sampleSize,
        });
        if (removed.length < 2) continue;
        const { share } = await relevantShare(judge, removed, categories);
        if (share < NEGATIVE_THRESHOLD) added.push(candidate);
      }
    }
    const next = cleanTerms([...kept, ...added]).slice(0, MAX_LIST_KEYWORDS);
    if (next.length === 0) {
      notes.push("every negative keyword removed relevant leads, but a list keeps one: the list was kept");
    } else {
      negatives = next;
      notes.push(`negatives: kept ${kept.length} of ${input.negatives.length}, added ${added.length}`);
    }
    await checkpoint();
  } else if (input.hasPositiveList) {
    notes.push("no paired negative list: the negative passes were skipped");
  }

  // The final quality score: the median of 3 independent samples.
  const scores: { score: number; relevant: number; total: number }[] = [];
  for (let index = 0; index < SCORE_SAMPLES; index += 1) {
    const sample = await sampleMatching(db, {
      include: positives.length > 0 ? positives : negatives,
      exclude: positives.length > 0 ? negatives : [],
      categories,
      limit: Math.max(judge.sampleSize, 50),
      slice: { index, of: SCORE_SAMPLES },
    });
    const { share, relevant } = await relevantShare(judge, sample, categories);
    // For a lone negative list the good leads are the ones it removes that are not relevant.
    const quality = positives.length > 0 ? share : sample.length > 0 ? 1 - share : 0;
    scores.push({
      score: Math.min(10, Math.max(1, Math.round(quality * 10))),
      relevant: positives.length > 0 ? relevant.size : sample.length - relevant.size,
      total: sample.length,
    });
  }
  scores.sort((a, b) => a.score - b.score);
  const median = scores[Math.floor(scores.length / 2)]!;
  const what = positives.length > 0 ? "the keywords find are in" : "the negatives remove are outside";
  const reasoning = [
    `${median.relevant} of ${median.total} sampled leads ${what} the source categories (median of ${SCORE_SAMPLES} samples, judged by ${judge.name})`,
    ...notes,
  ].join("; ");
  return { positives, negatives, score: median.score, reasoning: `${reasoning}.` };
}
