import type { IncomingMessage } from "node:http";
import { Router, type Response } from "express";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Logger } from "pino";
import type { KeyCache } from "../auth/key-cache.js";
import { authenticate, bearerToken } from "../auth/service.js";
import type { DbOrTrx } from "../db/database.js";
import { ApiError } from "../http/errors.js";
import type { SpecRoutes } from "../http/spec.js";
import { rateLimitHeaders, type RateLimits } from "../rate-limit/limiter.js";
import { LIMITS } from "../rate-limit/policy.js";
import type { OpenApiDocument } from "./input-schema.js";
import { bindTools, createMcpServer } from "./server.js";

/** The paths of the MCP server: the document's `/mcp`, and the same under the API's base path. */
export const MCP_PATHS = ["/mcp", "/api/v1/mcp"];

/** What the MCP route is built from. */
export interface McpDeps {
  db: DbOrTrx;
  keyCache?: KeyCache;
  rateLimits: RateLimits;
  logger: Logger;
  routes: SpecRoutes;
  document: OpenApiDocument;
}

function sendError(res: Response, err: unknown): void {
  if (err instanceof ApiError) {
    res.status(err.status).set(err.headers).json(err.body());
    return;
  }
  throw err;
}

/**
 * Whether the answer is one JSON body instead of an SSE stream: when the client does not accept
 * `text/event-stream` (a plain HTTP client). The transport insists on both types in `Accept`, so
 * such a request is given both (the SDK's clients send both and get SSE).
 */
function answerAsJson(req: IncomingMessage): boolean {
  if ((req.headers.accept ?? "").includes("text/event-stream")) return false;
  const both = "application/json, text/event-stream";
  // The transport reads the parsed headers and, for some names, the raw ones: both are set.
  req.headers.accept = both;
  const raw = req.rawHeaders;
  const at = raw.findIndex((name, i) => i % 2 === 0 && name.toLowerCase() === "accept");
  if (at >= 0) raw[at + 1] = both;
  else raw.push("Accept", both);
  return true;
}

/**
 * `POST /mcp`: the MCP server over the stateless Streamable HTTP transport (docs/mcp.md). Before
 * the transport sees the request: 60 requests per minute per client IP, then the bearer API key,
 * with REST's 401 and 403. `GET` and `DELETE` (streams and sessions of the stateful transport)
 * answer 405.
 */
export function mcpRoutes(deps: McpDeps): Router {
  const router = Router();
  const tools = bindTools(deps.document);
  router.post(MCP_PATHS, async (req, res) => {
    try {
      const state = await deps.rateLimits.consume([{ rule: LIMITS.mcp, subject: `ip${req.ip}` }]);
      if (state) res.set(rateLimitHeaders(state));
      await authenticate(deps.db, bearerToken(req.headers.authorization), deps.keyCache);
    } catch (err) {
      const exceeded = err as { state?: Parameters<typeof rateLimitHeaders>[0] };
      if (exceeded.state) res.set(rateLimitHeaders(exceeded.state));
      sendError(res, err);
      return;
    }
    const server = createMcpServer(deps.routes, tools, {
      authorization: req.headers.authorization,
      local: { address: req.socket.localAddress ?? "127.0.0.1", port: req.socket.localPort ?? 0 },
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: answerAsJson(req),
    });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } catch (err) {
      deps.logger.error({ err }, "MCP request failed");
      if (!res.headersSent) {
        res
          .status(500)
          .json({ jsonrpc: "2.0", error: { code: -32603, message: "Internal error." }, id: null });
      }
    }
  });
  router.all(MCP_PATHS, (_req, res) => {
    res
      .status(405)
      .set("Allow", "POST")
      .json({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: use POST." }, id: null });
  });
  return router;
}
