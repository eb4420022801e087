import type { Response } from "express";
import { pipeline } from "node:stream/promises";
import type { SerialisedJson, ServedFile } from "./contract.js";
import { serialiseAnswer } from "./json-text.js";

/** An answer as written: a status, headers, and a JSON body or a file. */
export type WritableAnswer =
  | { status: number; headers?: Record<string, string | number | undefined>; body: unknown }
  | { status: number; headers?: Record<string, string | number | undefined>; json: SerialisedJson }
  | { status: number; headers?: Record<string, string | number | undefined>; file: ServedFile };

/**
 * `attachment; filename="..."` (or `inline` for a page), quoted as openapi.yaml documents it (the `content-disposition`
 * package leaves token-safe names unquoted), with the exact name also in `filename*` (RFC 6266)
 * when it is not plain printable ASCII or holds a quote or backslash.
 */
export function contentDisposition(fileName: string, type: "attachment" | "inline" = "attachment"): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
  const header = `${type}; filename="${ascii}"`;
  return ascii === fileName ? header : `${header}; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/** Files belong to one caller: never cached by shared caches (a job's answer narrows it to `no-store`). */
const FILE_CACHE_CONTROL = "private, no-store";

type Headers = Record<string, string | number | undefined> | undefined;

function setHeaders(res: Response, status: number, headers: Headers): void {
  res.status(status);
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) res.setHeader(name, String(value));
  }
}

/**
 * Writes a JSON answer: its status, headers and body, with any JsonText in the body written as its
 * text (serialiseAnswer). With `checked` (the contract validator checks answers, in tests) the body
 * goes through `res.json`, which the validator watches: a spliced body is given to it parsed.
 */
export function writeJsonAnswer(
  res: Response,
  answer: { status: number; headers?: Headers; body: unknown },
  checked = false,
): void {
  setHeaders(res, answer.status, answer.headers);
  const { text, spliced } = serialiseAnswer(answer.body);
  if (checked) {
    res.json(spliced ? JSON.parse(text) : answer.body);
    return;
  }
  // What res.json would send: the same type, charset and length.
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.send(text);
}

/**
 * Writes a JSON answer whose body is already serialised (a job's large answer kept in storage):
 * streamed as it is, with the `Content-Type` `res.json` would give it and its length when known
 * (otherwise it is sent in chunks).
 */
export async function writeSerialisedJsonAnswer(
  res: Response,
  answer: { status: number; headers?: Headers; json: SerialisedJson },
): Promise<void> {
  setHeaders(res, answer.status, answer.headers);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  if (answer.json.size !== undefined) res.setHeader("Content-Length", String(answer.json.size));
  await pipeline(answer.json.body, res);
}

/**
 * Writes a file answer: its status and headers, then the file streamed with its `Content-Type`,
 * `Content-Length` and `Content-Disposition` (contentDisposition). With writeJsonAnswer and
 * writeSerialisedJsonAnswer, the only places the service writes an answer body.
 */
export async function writeFileAnswer(
  res: Response,
  answer: { status: number; headers?: Headers; file: ServedFile },
): Promise<void> {
  setHeaders(res, answer.status, answer.headers);
  const { file } = answer;
  // A page (the OAuth callback's) is shown by the browser; every other file is downloaded.
  const type = file.contentType.startsWith("text/html") ? "inline" : "attachment";
  res.setHeader("Content-Disposition", contentDisposition(file.fileName, type));
  res.setHeader("Content-Type", file.contentType);
  res.setHeader("Content-Length", String(file.size));
  if (!res.hasHeader("Cache-Control")) res.setHeader("Cache-Control", FILE_CACHE_CONTROL);
  await pipeline(file.body, res);
}
