import express, { type Express } from "express";
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pinoHttp } from "pino-http";
import { authenticateKey } from "../auth/middleware.js";
import { KeyUsageRecorder } from "../auth/key-usage.js";
import { dashboardRoutes } from "../dashboard/routes.js";
import type { OperationHandlers } from "../http/contract.js";
import { contractViolations, type ContractViolation } from "../http/contract-violations.js";
import { dispatchOperations, refuseNotBuilt } from "../http/dispatch.js";
import { errorHandler } from "../http/error-handler.js";
import { normalizeFreeTextQuery } from "../http/query-encoding.js";
import { keepRawBody, markArrival, matchedOf, matchOperation, passGate } from "../http/request-state.js";
import { loadSpec } from "../http/spec.js";
import { contractValidator } from "../http/validator.js";
import type { OpenApiDocument } from "../mcp/input-schema.js";
import { mcpRoutes } from "../mcp/route.js";
import { rateLimit } from "../rate-limit/middleware.js";
import { contractDocumentRoutes } from "../system/routes.js";
import type { AppContext } from "./context.js";
import { operationHandlers } from "./handlers.js";

/** Largest JSON body accepted (an enrichment of 100,000 URLs fits). */
const JSON_LIMIT = "25mb";
/** Largest body of `POST /enrichments`. */
const ENRICHMENT_JSON_LIMIT = "32mb";

/** Options of an app built for tests. */
export interface AppOptions {
  /** Handlers that replace the registered ones (test-only job kinds on long-running endpoints). */
  handlers?: Partial<OperationHandlers>;
}

function requestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers["x-request-id"];
  const id = typeof incoming === "string" && /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
  res.setHeader("X-Request-Id", id);
  return id;
}

/**
 * The HTTP API. Per request: arrival time, request id and log, the contract operation of the
 * method and path (unknown: 404), the API key (401 / 403), rate limits (429), the JSON body, the
 * contract validator (400 with `details`), then the operation's handler from the registry
 * (src/app/handlers.ts), and one error middleware. An operation not built yet answers 501 before
 * its body is read.
 */
export function createApp(ctx: AppContext, options: AppOptions = {}): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", ctx.config.trustProxy);
  // Answers are read fresh on every request and the contract has no 304: no ETag (a SHA-1 of every body).
  app.set("etag", false);
  app.use(markArrival);
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

  const spec = loadSpec();
  const handlers = { ...operationHandlers(ctx), ...options.handlers } as OperationHandlers;
  const reportViolation = ctx.config.validateResponses
    ? (violation: ContractViolation) => void contractViolations.push(violation)
    : undefined;
  app.use(contractDocumentRoutes(spec));
  // The MCP server (not a contract operation): its tool calls come back to this process over HTTP.
  app.use(
    mcpRoutes({
      db: ctx.db,
      keyCache: ctx.keyCache,
      rateLimits: ctx.rateLimits,
      logger: ctx.logger,
      routes: spec.routes,
      document: spec.document as OpenApiDocument,
    }),
  );
  // The dashboard's pages and script (not contract operations; docs/dashboard.md).
  app.use(dashboardRoutes());
  app.use(matchOperation(spec.routes));
  app.use(
    authenticateKey(ctx.db, ctx.keyCache, {
      sessions: { db: ctx.db, publicBaseUrl: ctx.config.publicBaseUrl, signingSecret: ctx.signingSecret },
      usage: new KeyUsageRecorder(ctx.db, ctx.logger),
    }),
  );
  app.use(rateLimit(ctx.rateLimits));
  app.use(refuseNotBuilt(handlers));
  // The payment processor's webhook is verified over its raw bytes.
  const json = express.json({ limit: JSON_LIMIT, verify: keepRawBody(["receivePaymentWebhook"]) });
  // POST /enrichments takes up to 32 MB (100,000 URLs with paths); every other body the limit above.
  const enrichmentJson = express.json({ limit: ENRICHMENT_JSON_LIMIT });
  app.use((req, res, next) =>
    (matchedOf(res)?.operation.operationId === "createEnrichment" ? enrichmentJson : json)(req, res, next),
  );
  // Search terms and the OAuth callback's texts may arrive with raw reserved characters or `+`,
  // which the validator refuses (see the function).
  app.use(normalizeFreeTextQuery);
  app.use(contractValidator(spec.document, ctx.logger, reportViolation));
  app.use(passGate);
  app.use(dispatchOperations(handlers, { answersChecked: reportViolation !== undefined }));
  app.use(errorHandler(ctx.logger, reportViolation));
  return app;
}
