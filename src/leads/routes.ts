import { Router } from "express";
import { fromTenths } from "../credits/ledger.js";
import { authOf, type AppContext } from "../http/context.js";
import { send } from "../http/types.js";
import { toLead, toMaskedLead } from "./presenter.js";
import { SchemaTypesCache, schemaTypesWarming } from "./schema-types.js";
import { withLeadQuerySlot } from "./search/capacity.js";
import { parseSearchFilters } from "./search/filters.js";
import { previewLeads, searchLeads } from "./search/service.js";

/**
 * Routes of searchLeads, previewLeads, listWebsiteSchemaTypes. `schemaTypes`: the process's
 * started cache (its owner stops it); without it the routes start one that only rebuilds
 * periodically.
 */
export function leadRoutes(ctx: AppContext, options: { schemaTypes?: SchemaTypesCache } = {}): Router {
  const router = Router();
  const schemaTypes = options.schemaTypes ?? new SchemaTypesCache(ctx.db, ctx.logger).start();

  router.get("/api/v1/leads", async (req, res) => {
    const { accountId } = authOf(res);
    // List values are re-read from the raw URL: the validator splits a JSON array string at commas.
    const filters = parseSearchFilters(req.originalUrl, "query");
    // The answer goes out before the query slot is given back.
    await withLeadQuerySlot(ctx.db, accountId, async () => {
      const result = await searchLeads(ctx.db, accountId, filters);
      if (result.capped) res.setHeader("X-Credits-Capped", "true");
      send(res, "searchLeads", 200, {
        data: {
          leads: result.leads.map(toLead),
          pagination: result.pagination,
          databaseType: "other",
          creditsUsed: fromTenths(result.creditsUsedTenths),
          creditsRemaining: fromTenths(result.creditsRemainingTenths),
        },
      });
    });
  });

  router.get("/api/v1/leads/preview", async (req, res) => {
    const { accountId } = authOf(res);
    const filters = parseSearchFilters(req.originalUrl, "query");
    await withLeadQuerySlot(ctx.db, accountId, async () => {
      const result = await previewLeads(ctx.db, accountId, filters);
      send(res, "previewLeads", 200, {
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
      });
    });
  });

  router.get("/api/v1/leads/other/schema-types", (_req, res) => {
    authOf(res);
    const types = schemaTypes.list();
    if (types === null) throw schemaTypesWarming();
    send(res, "listWebsiteSchemaTypes", 200, { data: types });
  });

  return router;
}
