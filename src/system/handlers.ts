import { sql } from "kysely";
import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";

/** `GET /health`: liveness and a database round trip, for load balancers (no key, no limit). */
export function systemHandlers({ db }: { db: Db }): Handlers<"getHealth"> {
  return {
    async getHealth() {
      try {
        await sql`select 1`.execute(db);
      } catch {
        return {
          status: 503,
          body: { error: "service_unavailable", message: "The database cannot be reached." },
        };
      }
      return { status: 200, body: { status: "ok", version: "1.0.0", time: new Date().toISOString() } };
    },
  };
}
