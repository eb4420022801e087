import express, { type Express } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import { randomUUID } from "node:crypto";
import { pinoHttp } from "pino-http";
import { profileRoutes } from "../accounts/routes.js";
import { exportBlacklistRoutes } from "../export-blacklist/routes.js";
import { exportFormatRoutes } from "../export-formats/routes.js";
import { exportHistoryRoutes } from "../export-history/routes.js";
import { filterPresetRoutes } from "../filter-presets/routes.js";
import { jobRoutes } from "../jobs/routes.js";
import { keywordListRoutes } from "../keyword-lists/routes.js";
import { leadExportHistoryRoutes } from "../lead-export-history/routes.js";
import { leadRoutes } from "../leads/routes.js";
import { settingsRoutes } from "../settings/routes.js";
import { systemRoutes } from "../system/routes.js";
import type { AppContext } from "./context.js";
import { contractViolations } from "./contract-violations.js";
import { errorHandler } from "./error-handler.js";
import { ApiError } from "./errors.js";
import { authenticateKey, matchOperation, rateLimit } from "./middleware.js";
import { SpecRoutes, loadSpec } from "./spec.js";
import "./validator-route-cache.js";

/** Largest JSON body accepted (an enrichment of 100,000 URLs fits). */
const JSON_LIMIT = "25mb";

/**
 * The HTTP API: request id and logs, the contract's routes, then per request: operation lookup
 * (unknown: 404), API key (401 / 403), rate limits (429), body parsing and contract validation
 * (400), the handler, and one error middleware.
 */
export function createApp(ctx: AppContext): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", process.env.TRUST_PROXY === "true");

  app.use(
    pinoHttp({
      logger: ctx.logger,
      genReqId: (req, res) => {
        const incoming = req.headers["x-request-id"];
        const id = typeof incoming === "string" && /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
        res.setHeader("X-Request-Id", id);
        return id;
      },
      autoLogging: { ignore: (req) => req.url === "/api/v1/health" },
    }),
  );

  app.use(systemRoutes(ctx));

  const spec = loadSpec();
  app.use(matchOperation(new SpecRoutes(spec.document)));
  app.use(authenticateKey(ctx));
  app.use(rateLimit(ctx));
  app.use(
    express.json({
      limit: JSON_LIMIT,
      verify: (req, _res, buf) => {
        (req as unknown as { rawBody: Buffer }).rawBody = buf;
      },
    }),
  );
  app.use(
    OpenApiValidator.middleware({
      apiSpec: structuredClone(spec.document) as never,
      validateApiSpec: false,
      validateRequests: { allErrors: true, allowUnknownQueryParameters: false },
      validateResponses: ctx.config.validateResponses
        ? {
            allErrors: true,
            onError: (err, _body, req) => {
              contractViolations.push({
                method: req.method,
                path: req.originalUrl,
                status: (err as { status?: number }).status ?? 500,
                message: err.message + JSON.stringify((err as { errors?: unknown }).errors ?? []),
              });
              ctx.logger.error({ err, path: req.originalUrl }, "response does not match openapi.yaml");
            },
          }
        : false,
      validateSecurity: false,
      validateFormats: true,
    }),
  );

  for (const routes of [
    profileRoutes,
    settingsRoutes,
    leadRoutes,
    filterPresetRoutes,
    keywordListRoutes,
    exportBlacklistRoutes,
    leadExportHistoryRoutes,
    jobRoutes,
    exportFormatRoutes,
    exportHistoryRoutes,
  ]) {
    app.use(routes(ctx));
  }

  // An operation of the contract without a handler yet: an explicit 501, never a silent 404.
  app.use(() => {
    throw new ApiError(501, "not_implemented", "This endpoint is not implemented yet.");
  });
  app.use(errorHandler(ctx.logger));
  return app;
}
