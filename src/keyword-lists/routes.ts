import { Router } from "express";
import { authOf, type AppContext } from "../http/context.js";
import { send, type JsonRequest } from "../http/types.js";
import { toKeywordListBody } from "./presenter.js";
import { createList, deleteList, listLists, replaceList } from "./service.js";

/** GET/POST /keyword-lists, PUT/DELETE /keyword-lists/{id}. */
export function keywordListRoutes(ctx: AppContext): Router {
  const router = Router();

  router.get("/api/v1/keyword-lists", async (_req, res) => {
    const { accountId } = authOf(res);
    const lists = await listLists(ctx.db, accountId);
    send(res, "listKeywordLists", 200, { data: lists.map(toKeywordListBody) });
  });

  router.post("/api/v1/keyword-lists", async (req, res) => {
    const { accountId } = authOf(res);
    const list = await createList(ctx.db, accountId, req.body as JsonRequest<"createKeywordList">);
    send(res, "createKeywordList", 201, { data: toKeywordListBody(list) });
  });

  router.put("/api/v1/keyword-lists/:id", async (req, res) => {
    const { accountId } = authOf(res);
    const list = await replaceList(
      ctx.db,
      accountId,
      Number(req.params.id),
      req.body as JsonRequest<"updateKeywordList">,
    );
    send(res, "updateKeywordList", 200, { data: toKeywordListBody(list) });
  });

  router.delete("/api/v1/keyword-lists/:id", async (req, res) => {
    const { accountId } = authOf(res);
    await deleteList(ctx.db, accountId, Number(req.params.id));
    send(res, "deleteKeywordList", 200, { data: { message: "Keyword list deleted." } });
  });

  return router;
}
