import { fromTenths } from "../credits/ledger.js";
import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";
import { jsonText } from "../http/json-text.js";
import { toLead, toMaskedLead, type ApiLead } from "./presenter.js";
import { schemaTypesWarming, type SchemaTypesCache } from "./schema-types.js";
import { parseSearchFilters } from "./search/filters.js";
import { previewLeads, searchLeads } from "./search/service.js";

/** `GET /leads`, `GET /leads/preview` and `GET /leads/other/schema-types`. */
export function leadHandlers(deps: {
  db: Db;
  /** The search pool (src/leads/search/settings.ts). */
  searchDb: Db;
  schemaTypes: SchemaTypesCache;
}): Handlers<"searchLeads" | "previewLeads" | "listWebsiteSchemaTypes"> {
  const { db, searchDb, schemaTypes } = deps;
  return {
    async searchLeads({ caller, http }) {
      // List values are re-read from the raw URL: the validator splits a JSON array string at commas.
      const filters = parseSearchFilters(http.url, "query");
      const result = await searchLeads({ db, searchDb }, caller.accountId, filters);
      return {
        status: 200,
        headers: result.capped ? { "X-Credits-Capped": "true" } : {},
        body: {
          data: {
            leads: result.leads.map((lead) => jsonText<ApiLead>(lead.json)),
            pagination: result.pagination,
            databaseType: "other",
            creditsUsed: fromTenths(result.creditsUsedTenths),
            creditsRemaining: fromTenths(result.creditsRemainingTenths),
          },
        },
      };
    },
    async previewLeads({ caller, http }) {
      const filters = parseSearchFilters(http.url, "query");
      const result = await previewLeads({ db, searchDb }, caller.accountId, filters);
      return {
        status: 200,
        body: {
          data: {
            leads: result.leads.map(({ lead, received }) => (received ? toLead(lead) : toMaskedLead(lead))),
            pagination: result.pagination,
            databaseType: "other",
            preview: true,
            summary: {
              totalMatches: result.totalMatches,
              newLeads: result.newLeads,
              alreadyReceived: result.alreadyReceived,
              exportCost: result.newLeads,
              creditsRemaining: fromTenths(result.creditsRemainingTenths),
            },
          },
        },
      };
    },
    async listWebsiteSchemaTypes() {
      const types = schemaTypes.list();
      if (types === null) throw schemaTypesWarming();
      return { status: 200, body: { data: types } };
    },
  };
}
