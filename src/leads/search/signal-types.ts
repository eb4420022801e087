import { BUYING_SIGNALS as GENERATED_SIGNALS } from "../import/generate-data.js";
import { BUYING_SIGNAL, SOCIAL_SIGNALS } from "../import/buying-signals.js";

/**
 * The buying signal types `buyingSignalTypeFilter` accepts (exact, case-sensitive): the real
 * service's documented types, the types our importer writes (buying-signals.ts) and those the
 * synthetic generator writes (generate-data.ts). A type and its other spelling match each other
 * (`Phone Primary` and our importer's `Primary Phone`, ...), so a filter finds the leads whichever
 * spelling they were written with.
 */
const DOCUMENTED = [
  "Newly Added",
  "Phone Primary",
  "Total Phones",
  "Email Primary",
  "Tier 1 Emails",
  "Tier 2 Emails",
  "Address Full",
  ...SOCIAL_SIGNALS.map((s) => s.type),
];

/** Pairs of spellings of one reason: the real service's and our importer's. */
const SAME_REASON: readonly [string, string][] = [
  ["Phone Primary", BUYING_SIGNAL.primaryPhone],
  ["Email Primary", BUYING_SIGNAL.primaryEmail],
  ["Tier 1 Emails", BUYING_SIGNAL.emailTier1],
  ["Tier 2 Emails", BUYING_SIGNAL.emailTier2],
  ["Address Full", BUYING_SIGNAL.fullAddress],
];

/** Every accepted type, documented ones first. */
export const BUYING_SIGNAL_TYPES: readonly string[] = [
  ...new Set([...DOCUMENTED, ...Object.values(BUYING_SIGNAL), ...GENERATED_SIGNALS]),
];

const ACCEPTED = new Set(BUYING_SIGNAL_TYPES);

/** Whether `type` is an accepted buying signal type. */
export const isBuyingSignalType = (type: string) => ACCEPTED.has(type);

/** The stored values a filter of these types matches: each type and its other spelling. */
export function storedSignalTypes(types: readonly string[]): string[] {
  const out = new Set(types);
  for (const [a, b] of SAME_REASON) {
    if (out.has(a) || out.has(b)) {
      out.add(a);
      out.add(b);
    }
  }
  return [...out];
}
