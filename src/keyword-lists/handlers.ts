import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";
import { toKeywordListBody } from "./presenter.js";
import { createList, deleteList, listLists, updateList } from "./service.js";

/** `GET/POST /keyword-lists` and `PUT/DELETE /keyword-lists/{id}`. */
export function keywordListHandlers({
  db,
}: {
  db: Db;
}): Handlers<"listKeywordLists" | "createKeywordList" | "updateKeywordList" | "deleteKeywordList"> {
  return {
    async listKeywordLists({ caller }) {
      const lists = await listLists(db, caller.accountId);
      return { status: 200, body: { data: lists.map(toKeywordListBody) } };
    },
    async createKeywordList({ caller, body }) {
      const list = await createList(db, caller.accountId, body);
      return { status: 201, body: { data: toKeywordListBody(list) } };
    },
    async updateKeywordList({ caller, params, body }) {
      const list = await updateList(db, caller.accountId, params.id, body);
      return { status: 200, body: { data: toKeywordListBody(list) } };
    },
    async deleteKeywordList({ caller, params }) {
      await deleteList(db, caller.accountId, params.id);
      return { status: 200, body: { data: { message: "Keyword list deleted." } } };
    },
  };
}
