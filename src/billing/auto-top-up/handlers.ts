import type { Config } from "../../config.js";
import type { Db } from "../../db/database.js";
import type { Handlers } from "../../http/contract.js";
import { processorFromConfig, type PaymentProcessor } from "../processor.js";
import { toAutoTopUpBody } from "./presenter.js";
import { getAutoTopUp, updateAutoTopUp } from "./settings.js";

/**
 * `GET/PATCH /auto-top-up`. The processor is built from the configuration, as for the other
 * billing operations; without it enabling answers 503 `payment_unavailable` (reading and turning
 * off need none). `processor` replaces it (tests).
 */
export function autoTopUpHandlers(ctx: {
  db: Db;
  config: Config;
  processor?: PaymentProcessor;
}): Handlers<"getAutoTopUp" | "updateAutoTopUp"> {
  const { db } = ctx;
  const processor = ctx.processor ?? processorFromConfig(ctx.config);
  return {
    async getAutoTopUp({ caller }) {
      return { status: 200, body: { data: toAutoTopUpBody(await getAutoTopUp(db, caller.accountId)) } };
    },
    async updateAutoTopUp({ caller, body }) {
      const view = await updateAutoTopUp(db, processor, caller.accountId, body);
      return { status: 200, body: { data: toAutoTopUpBody(view) } };
    },
  };
}
