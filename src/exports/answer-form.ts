import type { ExportAnswerForm } from "./job/input.js";

/** Media ranges that ask for the file itself (`application/octet-stream`: whatever its type). */
const FILE_RANGES = new Set([
  "text/csv",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  "application/zip",
  "application/octet-stream",
]);
/** Media ranges that take the JSON answer. */
const JSON_RANGES = new Set(["application/json", "application/*", "*/*"]);

/**
 * Whether an `Accept` header prefers the file itself to the JSON answer: its most preferred range
 * (highest `q`, the first among equals; `q=0` and ranges naming neither are skipped) is a file
 * type. No header, or none of the ranges it names: the JSON answer.
 */
export function prefersFile(accept: string | string[] | undefined): boolean {
  const text = Array.isArray(accept) ? accept.join(",") : accept;
  if (!text) return false;
  let best: { file: boolean; q: number } | undefined;
  for (const range of text.split(",")) {
    const [type = "", ...params] = range.split(";").map((part) => part.trim());
    const name = type.toLowerCase();
    const file = FILE_RANGES.has(name);
    if (!file && !JSON_RANGES.has(name)) continue;
    const qParam = params.find((p) => /^q\s*=/i.test(p));
    const q = qParam === undefined ? 1 : Number(qParam.slice(qParam.indexOf("=") + 1).trim());
    if (!Number.isFinite(q) || q <= 0) continue;
    if (!best || q > best.q) best = { file, q };
  }
  return best?.file ?? false;
}

/**
 * How an export request is answered: `inline: false` names the files (`links`); otherwise the
 * file itself for a client whose `Accept` prefers a file (prefersFile), else the JSON answer.
 */
export function exportAnswerForm(inline: boolean, accept: string | string[] | undefined): ExportAnswerForm {
  if (!inline) return "links";
  return prefersFile(accept) ? "file" : "json";
}
