import type { RequestHandler } from "express";
import { cameThroughMcp, operationOf, setCaller } from "../http/request-state.js";
import type { KeyCache } from "./key-cache.js";
import type { KeyUsageRecorder } from "./key-usage.js";
import { authenticate, bearerToken } from "./service.js";
import { sessionCaller } from "./sessions/middleware.js";
import type { SessionDeps } from "./sessions/service.js";
import type { DbOrTrx } from "../db/database.js";

/**
 * Authenticates the operations that take a key (401 for a missing, unknown or revoked key; 403 for
 * an account without an active or trialing paid subscription) and records the caller. With
 * `sessions`, a request without an Authorization header may use the dashboard's session cookie
 * instead (src/auth/sessions/: its caller's channel is `dashboard`, and a call that changes
 * something needs the session's CSRF token). `usage` records the keys' last use.
 */
export function authenticateKey(
  db: DbOrTrx,
  keyCache?: KeyCache,
  options: { sessions?: SessionDeps; usage?: KeyUsageRecorder } = {},
): RequestHandler {
  return async (req, res, next) => {
    const operation = operationOf(res);
    if (!operation.requiresKey) return next();
    if (options.sessions) {
      const dashboard = await sessionCaller(options.sessions, req, operation.operationId);
      if (dashboard) {
        setCaller(res, dashboard);
        return next();
      }
    }
    const caller = await authenticate(db, bearerToken(req.headers.authorization), keyCache);
    options.usage?.used(caller.keyId);
    setCaller(res, cameThroughMcp(req) ? { ...caller, channel: "mcp" } : caller);
    next();
  };
}
