import type { RequestHandler } from "express";
import { cameThroughMcp, operationOf, setCaller } from "../http/request-state.js";
import type { KeyCache } from "./key-cache.js";
import { authenticate, bearerToken } from "./service.js";
import type { DbOrTrx } from "../db/database.js";

/**
 * Authenticates the operations that take a key (401 for a missing, unknown or revoked key; 403 for
 * an account without an active or trialing paid subscription) and records the caller.
 */
export function authenticateKey(db: DbOrTrx, keyCache?: KeyCache): RequestHandler {
  return async (req, res, next) => {
    if (!operationOf(res).requiresKey) return next();
    const caller = await authenticate(db, bearerToken(req.headers.authorization), keyCache);
    setCaller(res, cameThroughMcp(req) ? { ...caller, channel: "mcp" } : caller);
    next();
  };
}
