import type { Migration } from "kysely";
import * as m0001 from "./2026_11_22_0001_accounts.js";
import * as m0002 from "./2026_11_22_0002_leads.js";
import * as m0003 from "./2026_11_22_0003_app_settings.js";
import * as m0100 from "./2026_11_22_0100_lead_search.js";
import * as m0300 from "./2026_11_22_0300_jobs.js";
import * as m0400 from "./2026_11_22_0400_exports.js";
import * as m0600 from "./2026_11_22_0600_auth_cache_notify.js";
import * as m0700 from "./2026_11_22_0700_lead_reservoir.js";
import * as m0800 from "./2026_11_22_0800_lead_versions.js";
import * as m0900 from "./2026_11_24_0900_integrations.js";
import * as m1130 from "./2026_11_24_1130_ai.js";
import * as m1110 from "./2026_11_24_1110_billing.js";
import * as m1050 from "./2026_11_24_1050_delivery_queue.js";
import * as m1100 from "./2026_11_24_1100_email_schedules.js";
import * as m1120 from "./2026_11_24_1120_enrichments.js";
import * as m1150 from "./2026_11_24_1150_crm.js";
import * as m1850 from "./2026_11_24_1850_lead_live_updates.js";
import * as m1900 from "./2026_11_24_1900_search_speed.js";
import * as m251100 from "./2026_11_25_0100_search_state_text_index.js";
import * as m251300 from "./2026_11_25_0300_search_signal_index.js";
import * as m270100 from "./2026_11_27_0100_lead_fields.js";
import * as m270200 from "./2026_11_27_0200_export_history_filters.js";
import * as m270300 from "./2026_11_27_0300_auto_top_up.js";
import * as m270400 from "./2026_11_27_0400_auto_refine.js";
import * as m270500 from "./2026_11_27_0500_search_contact_and_name.js";
import * as m270600 from "./2026_11_27_0600_dashboard_sessions.js";
import * as m271800 from "./2026_11_27_1800_delivery_answers.js";
import * as m271900 from "./2026_11_27_1900_crm_oauth_sessions.js";
import * as m280100 from "./2026_11_28_0100_search_state_order.js";
import * as m12080100 from "./2026_12_08_0100_search_text_statistics.js";

/** Every migration, by name; names sort in the order they run. Never edit one that has landed. */
export const migrations: Record<string, Migration> = {
  "2026_11_22_0001_accounts": m0001,
  "2026_11_22_0002_leads": m0002,
  "2026_11_22_0003_app_settings": m0003,
  "2026_11_22_0100_lead_search": m0100,
  "2026_11_22_0300_jobs": m0300,
  "2026_11_22_0400_exports": m0400,
  "2026_11_22_0600_auth_cache_notify": m0600,
  "2026_11_22_0700_lead_reservoir": m0700,
  "2026_11_22_0800_lead_versions": m0800,
  "2026_11_24_0900_integrations": m0900,
  "2026_11_24_1130_ai": m1130,
  "2026_11_24_1110_billing": m1110,
  "2026_11_24_1050_delivery_queue": m1050,
  "2026_11_24_1100_email_schedules": m1100,
  "2026_11_24_1120_enrichments": m1120,
  "2026_11_24_1150_crm": m1150,
  "2026_11_24_1850_lead_live_updates": m1850,
  "2026_11_24_1900_search_speed": m1900,
  "2026_11_25_0100_search_state_text_index": m251100,
  "2026_11_25_0300_search_signal_index": m251300,
  "2026_11_27_0100_lead_fields": m270100,
  "2026_11_27_0200_export_history_filters": m270200,
  "2026_11_27_0300_auto_top_up": m270300,
  "2026_11_27_0400_auto_refine": m270400,
  "2026_11_27_0500_search_contact_and_name": m270500,
  "2026_11_27_0600_dashboard_sessions": m270600,
  "2026_11_27_1800_delivery_answers": m271800,
  "2026_11_27_1900_crm_oauth_sessions": m271900,
  "2026_11_28_0100_search_state_order": m280100,
  "2026_12_08_0100_search_text_statistics": m12080100,
};
