/**
 * The text forms of list-valued search parameters that a preset's `filters` accepts besides JSON
 * arrays (docs/filter-presets.md): a JSON-array string (`"[\"*dental*\",\"*dentist*\"]"`) for any
 * list, and a comma-separated string (`"FL, GA"`) for the members the real service writes
 * comma-separated.
 */

/** Members the real service writes comma-separated (its "CS" parameters). */
export const COMMA_MEMBERS: ReadonlySet<string> = new Set([
  "stateInclude",
  "stateExclude",
  "buyingSignalTypeFilter",
  "updateReasonFilter",
  "websiteSchemaFilter",
]);

/** Members whose string value is plain text, never a list. */
const TEXT_MEMBERS: ReadonlySet<string> = new Set([
  "search",
  "sortBy",
  "sortOrder",
  "database",
  "redirectFilter",
]);

/**
 * The items of a JSON-array string, numbers as text (ZIP codes); undefined when `text` is not a
 * JSON array. Other items (term objects such as `{"v": "(512)", "m": "starts"}`) are kept as they
 * are for the search parameters' own checks.
 */
export function jsonArrayItems(text: string): unknown[] | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith("[") || !trimmed.endsWith("]")) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  return parsed.map((item) => (typeof item === "number" ? String(item) : item));
}

/** Comma-separated pieces, trimmed, empty ones dropped. */
export function commaItems(text: string): string[] {
  return text
    .split(",")
    .map((piece) => piece.trim())
    .filter((piece) => piece !== "");
}

/**
 * `filters` with its list-valued members as JSON arrays: a JSON-array string becomes its array and
 * a comma-separated string of a COMMA_MEMBERS member its trimmed pieces. Anything else is left for
 * the search parameters' checks (a wrong form then gives 400 `validation_error` there).
 */
export function listFormsToArrays(filters: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...filters };
  for (const [name, value] of Object.entries(filters)) {
    if (typeof value !== "string" || TEXT_MEMBERS.has(name)) continue;
    const items = jsonArrayItems(value);
    if (items) out[name] = items;
    else if (COMMA_MEMBERS.has(name) && !value.trim().startsWith("[")) out[name] = commaItems(value);
  }
  return out;
}
