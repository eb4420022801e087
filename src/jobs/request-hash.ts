import { createHash } from "node:crypto";

/** JSON with object keys sorted at every level, so equal requests hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The identity of a request for idempotency: SHA-256 of its method, concrete path, query and
 * body in canonical form (header order, key order and white space do not matter).
 */
export function requestHash(request: {
  method: string;
  path: string;
  query: unknown;
  body: unknown;
}): string {
  const canonical = canonicalJson({
    method: request.method.toUpperCase(),
    path: request.path,
    query: request.query ?? {},
    body: request.body ?? null,
  });
  return createHash("sha256").update(canonical).digest("hex");
}
