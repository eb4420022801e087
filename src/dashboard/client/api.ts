import createClient from "openapi-fetch";
import type { paths } from "../../../generated/api.js";

/**
 * The dashboard's client of the contract, generated from openapi.yaml's types: a contract change
 * that breaks a page breaks `npm run typecheck`. Calls go to this origin with the session cookie
 * (HttpOnly: the script never sees it); the session's CSRF token is kept in memory only and sent
 * on every call that is not a GET.
 */
export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: "same-origin" });

let csrfToken: string | undefined;

/** Remembers the session's CSRF token (from sign-in or `GET /auth/session`), in memory only. */
export function rememberCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

api.use({
  onRequest({ request }) {
    if (request.method !== "GET" && csrfToken !== undefined) request.headers.set("X-CSRF-Token", csrfToken);
    return request;
  },
});

/** The readable message of an error answer of the API (`{error, message}` or the 429 shape). */
export function messageOf(error: unknown, response: Response): string {
  if (
    typeof error === "object" &&
    error !== null &&
    "message" in error &&
    typeof error.message === "string"
  ) {
    return error.message;
  }
  return `The service answered ${response.status}. Try again.`;
}
