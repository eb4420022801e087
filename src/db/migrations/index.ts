import type { Migration } from "kysely";
import * as m0001 from "./2026_11_22_0001_accounts.js";
import * as m0002 from "./2026_11_22_0002_leads.js";
import * as m0003 from "./2026_11_22_0003_app_settings.js";

/** Every migration, by name; names sort in the order they run. Never edit one that has landed. */
export const migrations: Record<string, Migration> = {
  "2026_11_22_0001_accounts": m0001,
  "2026_11_22_0002_leads": m0002,
  "2026_11_22_0003_app_settings": m0003,
};
