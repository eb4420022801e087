/** What a `Prefer` header asks for, after invalid values are dropped. */
export interface Preference {
  /** Seconds to wait, counted from arrival; undefined: the default wait. */
  waitSeconds: number | undefined;
  respondAsync: boolean;
  /** The honoured preferences for `Preference-Applied`; undefined when none was honoured. */
  applied: string | undefined;
}

/**
 * Parses `Prefer` (RFC 7240): `respond-async` and `wait=N` (0..maxWait), comma separated, names in
 * any case, parameters after `;` ignored. Unknown preferences, out-of-range or malformed waits and
 * repeats are ignored (the first occurrence wins). `respond-async` alone answers 202 at once;
 * with `wait=N` it waits up to N seconds first (RFC 7240 section 4.3).
 */
export function parsePrefer(header: string | string[] | undefined, maxWaitSeconds: number): Preference {
  const raw = Array.isArray(header) ? header.join(",") : (header ?? "");
  let waitSeconds: number | undefined;
  let respondAsync = false;
  for (const item of raw.split(",")) {
    const [preference = ""] = item.split(";");
    const match = /^\s*([A-Za-z-]+)\s*(?:=\s*"?([^"\s]*)"?)?\s*$/.exec(preference);
    if (!match) continue;
    const name = match[1]!.toLowerCase();
    const value = match[2];
    if (name === "respond-async" && value === undefined) respondAsync = true;
    if (name === "wait" && waitSeconds === undefined && value !== undefined && /^\d{1,6}$/.test(value)) {
      const seconds = Number(value);
      if (seconds <= maxWaitSeconds) waitSeconds = seconds;
    }
  }
  const applied = [
    respondAsync ? "respond-async" : undefined,
    waitSeconds !== undefined ? `wait=${waitSeconds}` : undefined,
  ]
    .filter((part): part is string => part !== undefined)
    .join(", ");
  return { waitSeconds, respondAsync, applied: applied || undefined };
}

/** Milliseconds to wait for a request: `wait=N`, else 0 with respond-async, else the default. */
export function waitMillis(preference: Preference, defaultWaitMs: number): number {
  if (preference.waitSeconds !== undefined) return preference.waitSeconds * 1000;
  if (preference.respondAsync) return 0;
  return defaultWaitMs;
}
