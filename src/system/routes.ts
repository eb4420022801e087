import { Router } from "express";
import { sql } from "kysely";
import swaggerUi from "swagger-ui-express";
import type { AppContext } from "../http/context.js";
import { loadSpec } from "../http/spec.js";

/** Health check, the contract file and the interactive reference (no key, not rate limited). */
export function systemRoutes(ctx: AppContext): Router {
  const router = Router();
  const spec = loadSpec();

  router.get("/api/v1/health", async (_req, res) => {
    try {
      await sql`select 1`.execute(ctx.db);
      res.json({ status: "ok", version: "1.0.0", time: new Date().toISOString() });
    } catch {
      res.status(503).json({ error: "service_unavailable", message: "The database cannot be reached." });
    }
  });

  router.get("/openapi.yaml", (_req, res) => {
    res.type("application/yaml").send(spec.text);
  });

  router.use(
    "/docs",
    swaggerUi.serve,
    swaggerUi.setup(spec.document as object, { customSiteTitle: "Lead Service API" }),
  );
  return router;
}
