import type { components } from "../../generated/api.js";
import { fromTenths } from "../credits/ledger.js";
import type { Db } from "../db/database.js";
import { exportMethodOf } from "./delivery-channel.js";
import type { Handlers } from "../http/contract.js";
import { jsonText } from "../http/json-text.js";
import type { ApiLead } from "./presenter.js";
import { schemaTypesWarming, type SchemaTypesCache } from "./schema-types.js";
import { parseSearchRequest } from "./search/controls.js";
import { hasPositiveFilter, POSITIVE_PARAMETERS, type SearchFilters } from "./search/filters.js";
import { creditsRemainingTenths, previewLeads, searchLeads } from "./search/service.js";

type PreviewLead = components["schemas"]["PreviewLead"];

/** The answer's members for a request without a positive filter (nothing searched). */
function requiresKeywords(filters: SearchFilters) {
  return {
    leads: [],
    pagination: { page: filters.page, limit: filters.limit, total: 0, pages: 0 },
    databaseType: "other" as const,
    requiresKeywords: true,
    message:
      `Nothing was searched: at least one positive filter is required (${POSITIVE_PARAMETERS.join(", ")}). ` +
      "`search` and the narrowing filters (states, cities, dates, contact and company filters) do not count.",
  };
}

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
      const { filters, controls } = parseSearchRequest(http.url, [
        "maxCredits",
        "maxResults",
        "excludePurchased",
      ]);
      const echo = {
        ...(controls.maxResults === null ? {} : { maxResults: controls.maxResults }),
        ...(controls.maxCredits === null ? {} : { maxCredits: controls.maxCredits }),
      };
      if (!hasPositiveFilter(filters)) {
        const remaining = await creditsRemainingTenths(db, caller.accountId);
        return {
          status: 200,
          body: {
            data: {
              ...requiresKeywords(filters),
              creditsUsed: 0,
              creditsRemaining: fromTenths(remaining),
              ...echo,
            },
          },
        };
      }
      const result = await searchLeads(
        { db, searchDb },
        caller.accountId,
        filters,
        controls,
        exportMethodOf(caller),
      );
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
            ...echo,
          },
        },
      };
    },
    async previewLeads({ caller, http }) {
      const { filters, controls } = parseSearchRequest(http.url, ["excludePurchased"]);
      if (!hasPositiveFilter(filters)) {
        const remaining = await creditsRemainingTenths(db, caller.accountId);
        return {
          status: 200,
          body: {
            data: {
              ...requiresKeywords(filters),
              preview: true,
              summary: {
                totalMatches: 0,
                newLeads: 0,
                alreadyReceived: 0,
                exportCost: 0,
                creditsRemaining: fromTenths(remaining),
              },
            },
          },
        };
      }
      const result = await previewLeads({ db, searchDb }, caller.accountId, filters, controls);
      return {
        status: 200,
        body: {
          data: {
            leads: result.leads.map((lead) => jsonText<PreviewLead>(lead.json)),
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
