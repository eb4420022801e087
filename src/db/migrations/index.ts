import type { Migration } from "kysely";
import * as m0001 from "./2026_11_22_0001_accounts.js";

/** Every migration, by name; names sort in the order they run. Never edit one that has landed. */
export const migrations: Record<string, Migration> = {
  "2026_11_22_0001_accounts": m0001,
};
