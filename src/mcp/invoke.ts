import http from "node:http";
import { describeDetails, invalidInput, type ErrorDetail } from "../http/errors.js";
import { MCP_CALL_HEADER, MCP_CALL_TOKEN } from "../http/request-state.js";
import type { SpecOperation } from "../http/spec.js";
import type { ToolBinding } from "./input-schema.js";

/** A tool call's answer, as MCP `tools/call` returns it. */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Who calls (the MCP request's key), and this process's own address (the MCP request's socket). */
export interface ToolCaller {
  authorization: string | undefined;
  /** Where this process answered the MCP request: tool calls go back to the same process. */
  local: { address: string; port: number };
}

/** Keep-alive connections of tool calls to this process. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 32, timeout: 4_000 });

/** One HTTP exchange with this process. */
function loopback(
  local: ToolCaller["local"],
  request: { method: string; path: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: local.address,
        port: local.port,
        method: request.method,
        path: request.path,
        headers:
          request.body === undefined
            ? request.headers
            : { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) },
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 500, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(request.body);
  });
}

function answer(body: Record<string, unknown>, isError: boolean): ToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(body) }],
    structuredContent: body,
    ...(isError ? { isError: true } : {}),
  };
}

/** The tool error of arguments that do not fit the tool: the operation's own 400 code. */
function badArguments(operation: SpecOperation | undefined, details: ErrorDetail[]): ToolResult {
  const error = invalidInput(operation, describeDetails(details, "Invalid arguments"), details);
  return answer({ error: error.code, message: error.message, details }, true);
}

/**
 * The job protocol's headers (`X-SVC-Job-Id`, `X-SVC-Job-Status`), which REST clients read beside
 * the body: a tool result carries them as a line of text and in `_meta`.
 */
function withJobState(result: ToolResult, headers: Record<string, unknown>): ToolResult {
  const jobId = headers["x-svc-job-id"];
  const jobStatus = headers["x-svc-job-status"];
  if (typeof jobId !== "string" || typeof jobStatus !== "string") return result;
  return {
    ...result,
    content: [...result.content, { type: "text", text: `Job ${jobId}: ${jobStatus}.` }],
    _meta: { jobId, jobStatus },
  };
}

function queryValue(value: unknown, commaSeparated: boolean): string[] {
  if (Array.isArray(value)) {
    const items = value.map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
    return commaSeparated ? [items.join(",")] : items;
  }
  return [typeof value === "string" ? value : JSON.stringify(value)];
}

/**
 * Calls a tool's operation through the service's own HTTP pipeline, on a loopback connection to
 * this same process: the key, rate limits, validation, charging and the job protocol are exactly
 * REST's. The request carries this process's MCP token (its caller's channel is `mcp`). A REST
 * error becomes a tool error with the same `error` and `message`.
 */
export async function invokeOperation(
  operation: SpecOperation | undefined,
  binding: ToolBinding,
  args: Record<string, unknown>,
  caller: ToolCaller,
): Promise<ToolResult> {
  const known = new Set([
    ...binding.pathParams,
    ...binding.queryParams.map((q) => q.name),
    ...binding.bodyMembers,
    ...(binding.idempotencyKey ? ["idempotencyKey"] : []),
  ]);
  const unknown = Object.keys(args).filter((name) => !known.has(name));
  const missing = binding.pathParams.filter((name) => args[name] === undefined || args[name] === null);
  if (unknown.length > 0 || missing.length > 0) {
    return badArguments(operation, [
      ...unknown.map((name) => ({ path: [name], message: "is not an argument of this tool" })),
      ...missing.map((name) => ({ path: [name], message: "is required" })),
    ]);
  }
  const path = binding.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    encodeURIComponent(String(args[name])),
  );
  const query = new URLSearchParams();
  for (const { name, commaSeparated } of binding.queryParams) {
    if (args[name] === undefined || args[name] === null) continue;
    for (const value of queryValue(args[name], commaSeparated)) query.append(name, value);
  }
  const headers: Record<string, string> = { accept: "application/json", [MCP_CALL_HEADER]: MCP_CALL_TOKEN };
  if (caller.authorization !== undefined) headers.authorization = caller.authorization;
  if (binding.longRunning) headers.prefer = "respond-async";
  if (typeof args.idempotencyKey === "string") headers["idempotency-key"] = args.idempotencyKey;
  let payload: string | undefined;
  if (binding.hasBody) {
    const body: Record<string, unknown> = {};
    for (const name of binding.bodyMembers) if (args[name] !== undefined) body[name] = args[name];
    Object.assign(body, binding.fixedBody);
    payload = JSON.stringify(body);
    headers["content-type"] = "application/json";
  }
  const search = query.toString();
  const response = await loopback(caller.local, {
    method: binding.method,
    path: search ? `${path}?${search}` : path,
    headers,
    body: payload,
  });
  const type = String(response.headers["content-type"] ?? "");
  if (type.includes("application/json")) {
    const body = JSON.parse(response.body.toString("utf8")) as Record<string, unknown>;
    return withJobState(answer(body, response.status >= 400), response.headers);
  }
  if (response.status >= 400) {
    return answer({ error: "internal_error", message: `HTTP ${response.status}` }, true);
  }
  // A file answer is never returned whole: the file is in the export history, with a download link.
  return withJobState(
    answer(
      {
        data: {
          message:
            `The answer is a file (${type || "unknown type"}, ${response.body.length} bytes). It is in the ` +
            `export history: list_export_history gives its id, get_export_download_url a link.`,
        },
      },
      false,
    ),
    response.headers,
  );
}
