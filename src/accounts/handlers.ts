import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";
import { toProfile } from "./presenter.js";
import { getAccountWithBalance, updateProfile } from "./service.js";

/** `GET /me` and `PATCH /me`. */
export function profileHandlers({ db }: { db: Db }): Handlers<"getProfile" | "updateProfile"> {
  return {
    async getProfile({ caller }) {
      return { status: 200, body: { data: toProfile(await getAccountWithBalance(db, caller.accountId)) } };
    },
    async updateProfile({ caller, body }) {
      await updateProfile(db, caller.accountId, body);
      return { status: 200, body: { data: toProfile(await getAccountWithBalance(db, caller.accountId)) } };
    },
  };
}
