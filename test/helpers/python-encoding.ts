/**
 * What Python's standard library sends, for replaying the real service's documented calls as
 * `smb_api.py` and REFERENCE.md's examples encode them: `json.dumps` (default separators, ASCII)
 * and `urllib.parse.urlencode` (`quote_plus`: space as `+`, everything but letters, digits and
 * `_.-~` percent-encoded).
 */

/** `json.dumps(value)` for JSON values (`", "` and `": "` separators, non-ASCII as `\uXXXX`). */
export function pyJsonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pyJsonDumps).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([k, v]) => `${pyJsonDumps(k)}: ${pyJsonDumps(v)}`)
      .join(", ")}}`;
  }
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** `urllib.parse.quote_plus(text)`. */
export function pyQuotePlus(text: string): string {
  return [...Buffer.from(text, "utf8")]
    .map((byte) => {
      const c = String.fromCharCode(byte);
      if (/[A-Za-z0-9_.~-]/.test(c)) return c;
      if (c === " ") return "+";
      return `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");
}

/** `urllib.parse.urlencode(pairs)` of string values. */
export function pyUrlencode(pairs: Record<string, string>): string {
  return Object.entries(pairs)
    .map(([k, v]) => `${pyQuotePlus(k)}=${pyQuotePlus(v)}`)
    .join("&");
}
