import type { RequestHandler } from "express";
import { matchedOf } from "./request-state.js";

/**
 * Operations whose query values carry free text: the lead searches' list-valued parameters (search
 * terms, JSON array strings), and the OAuth callback, whose `error_description` a CRM sends form
 * encoded (`User+denied+access`).
 */
const FREE_TEXT_QUERY_OPERATIONS = new Set(["searchLeads", "previewLeads", "integrationOAuthCallback"]);

/** Reserved characters the request validator refuses raw in query values (`,` stays: the list delimiter). */
const RESERVED = /[:/?#[\]@!$'()*;=]/g;

/**
 * Percent-encodes the reserved characters of query values, and turns the form encoding of a space
 * (`+`) into `%20`. Express decodes both spellings the same way, so nothing changes for the
 * handler; the contract validator, however, refuses raw reserved characters in `explode: false`
 * parameters, which would refuse `pool+repair` (how most clients send a space, the URL
 * wildcard), `["plumb","roof"]` (the JSON array string form) and URL terms such as
 * `example.com/shop`.
 */
export function encodeSearchQuery(query: string): string {
  return query
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return pair;
      const value = pair
        .slice(eq + 1)
        .replace(/\+/g, "%20")
        .replace(RESERVED, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
      return `${pair.slice(0, eq)}=${value}`;
    })
    .join("&");
}

/** Middleware (before the contract validator): encodeSearchQuery on the free-text query operations. */
export const normalizeFreeTextQuery: RequestHandler = (req, res, next) => {
  const q = req.originalUrl.indexOf("?");
  if (q >= 0 && FREE_TEXT_QUERY_OPERATIONS.has(matchedOf(res)?.operation.operationId ?? "")) {
    const encoded = encodeSearchQuery(req.originalUrl.slice(q + 1));
    req.originalUrl = `${req.originalUrl.slice(0, q)}?${encoded}`;
    const uq = req.url.indexOf("?");
    if (uq >= 0) req.url = `${req.url.slice(0, uq)}?${encoded}`;
  }
  next();
};
