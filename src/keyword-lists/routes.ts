import { Router } from "express";
import type { AppContext } from "../http/context.js";

/** Routes of keyword lists (operations without a handler answer 501 until they get one). */
export function keywordListRoutes(_ctx: AppContext): Router {
  const router = Router();
  return router;
}
