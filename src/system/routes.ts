import { Router } from "express";
import swaggerUi from "swagger-ui-express";

/**
 * The contract file and the interactive reference (outside `/api/v1`: not operations of the
 * contract; no key, not rate limited).
 */
export function contractDocumentRoutes(spec: { text: string; document: unknown }): Router {
  const router = Router();
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
