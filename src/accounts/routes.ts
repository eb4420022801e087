import { Router } from "express";
import type { AppContext } from "../http/context.js";
import { authOf } from "../http/context.js";
import { send } from "../http/types.js";
import { toProfile } from "./presenter.js";
import { getAccountWithBalance, updateProfile } from "./service.js";

/** GET /me and PATCH /me. */
export function profileRoutes(ctx: AppContext): Router {
  const router = Router();

  router.get("/api/v1/me", async (_req, res) => {
    const { accountId } = authOf(res);
    send(res, "getProfile", 200, { data: toProfile(await getAccountWithBalance(ctx.db, accountId)) });
  });

  router.patch("/api/v1/me", async (req, res) => {
    const { accountId } = authOf(res);
    await updateProfile(ctx.db, accountId, req.body as Record<string, unknown>);
    send(res, "updateProfile", 200, { data: toProfile(await getAccountWithBalance(ctx.db, accountId)) });
  });

  return router;
}
