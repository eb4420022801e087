import type { Request } from "express";
import type { DashboardCaller } from "../../http/contract.js";
import { errors } from "../../http/errors.js";
import { readCookie, SESSION_COOKIE } from "./cookie.js";
import { authenticateSession, type SessionDeps } from "./service.js";

/** The operations of the session itself: cookie only, and open to an unpaid account (to sign out). */
export const SESSION_ONLY_OPERATIONS: ReadonlySet<string> = new Set(["getSession", "signOut"]);

/**
 * The dashboard caller of a request that uses the session cookie (and no Authorization header:
 * an API key always wins), or undefined when it does not. The session's own operations take only
 * the cookie: without it they answer 401.
 */
export async function sessionCaller(
  deps: SessionDeps,
  req: Request,
  operationId: string,
): Promise<DashboardCaller | undefined> {
  const sessionOnly = SESSION_ONLY_OPERATIONS.has(operationId);
  const token =
    req.headers.authorization === undefined || sessionOnly
      ? readCookie(req.headers.cookie, SESSION_COOKIE)
      : undefined;
  if (token === undefined) {
    if (sessionOnly)
      throw errors.unauthorized("Sign in to the dashboard first: this needs the session cookie.");
    return undefined;
  }
  const csrf = req.headers["x-csrf-token"];
  return authenticateSession(deps, {
    token,
    method: req.method,
    csrfHeader: typeof csrf === "string" ? csrf : undefined,
    paidOnly: !sessionOnly,
  });
}
