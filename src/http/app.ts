import express, { type Express, type Router } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pinoHttp } from "pino-http";
import { profileRoutes } from "../accounts/routes.js";
import { exportBlacklistRoutes } from "../export-blacklist/routes.js";
import { exportFormatRoutes } from "../export-formats/routes.js";
import { exportHistoryRoutes } from "../export-history/routes.js";
import { exportRoutes } from "../exports/routes.js";
import { filterPresetRoutes } from "../filter-presets/routes.js";
import { jobRoutes } from "../jobs/routes.js";
import { keywordListRoutes } from "../keyword-lists/routes.js";
import { leadExportHistoryRoutes } from "../lead-export-history/routes.js";
import { leadRoutes } from "../leads/routes.js";
import { normalizeSearchQuery } from "../leads/search/query-encoding.js";
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
export function createApp(ctx: AppContext, options: { testRoutes?: Router[] } = {}): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", process.env.TRUST_PROXY === "true");
  // Answers are read fresh on every request and the contract has no 304: no ETag (a SHA-1 of every body).
  app.set("etag", false);
  // Arrival time: a long-running request's `Prefer: wait` counts from it.
  app.use((_req, res, next) => {
    res.locals.arrivedAt = Date.now();
    next();
  });

  const requestId = (req: IncomingMessage, res: ServerResponse) => {
    const incoming = req.headers["x-request-id"];
    const id = typeof incoming === "string" && /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
    res.setHeader("X-Request-Id", id);
    return id;
  };
  // pino-http logs every request at info. Below that level it would still build a child logger
  // with the serialised request for every request (a few percent of the CPU under load), so then
  // only the request id is set.
  app.use(
    ctx.logger.isLevelEnabled("info")
      ? pinoHttp({
          logger: ctx.logger,
          genReqId: requestId,
          autoLogging: { ignore: (req) => req.url === "/api/v1/health" },
        })
      : (req, res, next) => {
          req.id = requestId(req, res);
          next();
        },
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
  // Search terms may arrive with raw reserved characters the validator refuses (see the function).
  app.use(normalizeSearchQuery);
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
      // The contract has no multipart bodies: no upload parsing on every request.
      fileUploader: false,
    }),
  );

  // Routes a test mounts ahead of the areas' (test-only job kinds on long-running endpoints).
  for (const router of options.testRoutes ?? []) app.use(router);
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
    exportRoutes,
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
