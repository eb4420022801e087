import { ApiError, describeDetails, errors, type ErrorDetail } from "../../http/errors.js";
import { parseSearchFilters, type SearchFilters } from "./filters.js";

/** The cost controls of `GET /leads` and the preview's filter on received leads (docs/leads.md). */
export interface SearchControls {
  /** Most credits the call may spend (`maxCredits`, 0 or more); null: no cap but the balance. */
  maxCredits: number | null;
  /** Most leads the page returns (`maxResults`, 1 or more); null: the whole page. */
  maxResults: number | null;
  /** Only leads the account has not received (`excludePurchased=true`). */
  excludePurchased: boolean;
}

/** The query parameters of SearchControls. */
export type ControlName = "maxCredits" | "maxResults" | "excludePurchased";

/** Largest value of a 32-bit integer parameter. */
const MAX_INT32 = 2_147_483_647;

/** No controls: what a request without any of the parameters means. */
export const NO_CONTROLS: SearchControls = { maxCredits: null, maxResults: null, excludePurchased: false };

function queryOf(url: string): URLSearchParams {
  const q = url.indexOf("?");
  return new URLSearchParams(q >= 0 ? url.slice(q + 1) : "");
}

/**
 * A whole number of at least `min`, written as plain digits. The real service reads a negative or
 * non-numeric value as "no cap" and cuts a decimal; we refuse them, so a cap is never lost.
 */
function wholeNumber(raw: string, min: number): { value: number } | { message: string } {
  if (!/^\d+$/.test(raw)) return { message: `must be a whole number of ${min} or more` };
  const value = Number(raw);
  if (value < min) return { message: `must be ${min} or more` };
  if (value > MAX_INT32) return { message: `must be at most ${MAX_INT32}` };
  return { value };
}

/**
 * Reads the cost controls named by `allowed` from a request's original URL (the other names are the
 * contract's business: unknown parameters never reach a handler). Each may be given once:
 * `maxCredits` a whole number >= 0, `maxResults` a whole number >= 1, `excludePurchased` `true`
 * or `false`. Problems are returned as details (path `["query", name]`).
 */
export function readSearchControls(
  url: string,
  allowed: readonly ControlName[],
): { controls: SearchControls; problems: ErrorDetail[] } {
  const params = queryOf(url);
  const problems: ErrorDetail[] = [];
  const controls: SearchControls = { ...NO_CONTROLS };
  for (const name of allowed) {
    const values = params.getAll(name);
    if (values.length === 0) continue;
    const path = ["query", name];
    if (values.length > 1) {
      problems.push({ path, message: "must be given once" });
      continue;
    }
    const raw = values[0]!;
    if (name === "excludePurchased") {
      if (raw === "true" || raw === "false") controls.excludePurchased = raw === "true";
      else problems.push({ path, message: "must be true or false" });
      continue;
    }
    const parsed = wholeNumber(raw, name === "maxCredits" ? 0 : 1);
    if ("message" in parsed) problems.push({ path, message: parsed.message });
    else controls[name] = parsed.value;
  }
  return { controls, problems };
}

/**
 * The search parameters and cost controls of a `GET /leads` or preview request, from its original
 * URL (list values re-read from the raw text, parseSearchFilters). A missing positive filter is not
 * an error here (the caller answers `requiresKeywords: true`). Every problem of both, in one 400
 * `validation_error` with details.
 */
export function parseSearchRequest(
  url: string,
  allowed: readonly ControlName[],
): { filters: SearchFilters; controls: SearchControls } {
  const { controls, problems } = readSearchControls(url, allowed);
  let filters: SearchFilters | null = null;
  let details: ErrorDetail[] = [];
  try {
    filters = parseSearchFilters(url, "query", { requirePositive: false });
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== "validation_error") throw err;
    details = err.details ?? [];
  }
  const all = [...details, ...problems];
  if (all.length > 0 || filters === null) {
    throw errors.validation(describeDetails(all, "Invalid search parameters"), all);
  }
  return { filters, controls };
}
