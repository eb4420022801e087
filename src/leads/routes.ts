import { Router } from "express";
import type { AppContext } from "../http/context.js";

/** Routes of searchLeads, previewLeads, listWebsiteSchemaTypes (operations without a handler answer 501 until they get one). */
export function leadRoutes(_ctx: AppContext): Router {
  const router = Router();
  return router;
}
