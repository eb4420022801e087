import { resolveLeadField } from "../fields.js";

/**
 * Columns that keywords and `...IncludeTerms` / `...ExcludeTerms` search (the OR group members of
 * `orColumns` and the columns of the term parameters). `phoneTotal` is both phones, `email` all
 * eight e-mail fields (our own name), `emailPrimary` / `phonePrimary` the primary value only.
 */
export const TERM_COLUMNS = [
  "registeredUrl",
  "crawledUrl",
  "companyName",
  "aiCategoryEstimation",
  "description",
  "city",
  "street",
  "state",
  "zip",
  "phonePrimary",
  "phoneTotal",
  "email",
  "emailPrimary",
  "emailTier1",
  "emailTier2",
  "emailTier3",
  "emailTier4",
  "emailTier5",
  "emailTier6",
] as const;
export type TermColumn = (typeof TERM_COLUMNS)[number];

/** The default OR group of phase 1: the four searched columns (docs/leads.md, search). */
export const DEFAULT_OR_COLUMNS: readonly TermColumn[] = [
  "registeredUrl",
  "crawledUrl",
  "companyName",
  "aiCategoryEstimation",
];

/** The URL columns: a space in a keyword or term is a wildcard there. */
export const URL_COLUMNS: ReadonlySet<TermColumn> = new Set(["registeredUrl", "crawledUrl"]);

/**
 * Column-specific term parameters: `<prefix>IncludeTerms` / `<prefix>ExcludeTerms` and their
 * column. `phone...Terms` and `email...Terms` keep their meaning (any phone, any e-mail field).
 */
export const TERM_PARAMETERS = [
  { prefix: "name", column: "companyName" },
  { prefix: "url", column: "registeredUrl" },
  { prefix: "crawledUrl", column: "crawledUrl" },
  { prefix: "description", column: "description" },
  { prefix: "city", column: "city" },
  { prefix: "street", column: "street" },
  { prefix: "phone", column: "phoneTotal" },
  { prefix: "email", column: "email" },
] as const satisfies readonly { prefix: string; column: TermColumn }[];

/**
 * The term column a client's `orColumns` name stands for: any name or alias of the lead field
 * (`wOgrequestedUrl`, `wCompanyName`, `wProfileDescriptionShort`, `wAddressCity`, ...). Two names
 * of one field differ: our own `phone` means both phones (as `wPhoneTotal`) and our own `email`
 * all eight e-mail fields, while the real service's `wPhonePrimary` / `wEmailPrimary` (and
 * `phonePrimary` / `emailPrimary`) mean the primary value only.
 */
export function resolveTermColumn(name: string): TermColumn | undefined {
  const field = resolveLeadField(name);
  if (!field) return undefined;
  const typed = name.trim().toLowerCase();
  if (field.name === "phone") return typed === "phone" ? "phoneTotal" : "phonePrimary";
  if (field.name === "email") return typed === "email" ? "email" : "emailPrimary";
  return TERM_COLUMNS.find((c) => c === field.name);
}
