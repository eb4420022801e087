/**
 * Tool inputs generated from the contract (openapi.yaml): a tool's arguments are its operation's
 * path and query parameters and the members of its JSON body, side by side in one object, each
 * with the contract's own schema (references resolved inline, so any MCP client reads them).
 */

type JsonSchema = Record<string, unknown>;

interface OpenApiParameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
  style?: string;
  explode?: boolean;
}

interface OpenApiOperation {
  operationId?: string;
  parameters?: (OpenApiParameter | { $ref: string })[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> } | { $ref: string };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: Record<string, Record<string, unknown>>;
}

/** How a tool's arguments become its operation's request. */
export interface ToolBinding {
  method: string;
  /** The path template (`/api/v1/integrations/{id}/push-lead`). */
  path: string;
  pathParams: string[];
  /** Query parameters, with whether an array is sent comma-separated (`explode: false`). */
  queryParams: { name: string; commaSeparated: boolean }[];
  /** The body members the tool takes (empty: no body, or a body of fixed members only). */
  bodyMembers: string[];
  hasBody: boolean;
  /** Body members the tool always sends (`InputShaping.fixedBody`). */
  fixedBody: Record<string, unknown>;
  /** Whether the operation takes `Idempotency-Key` (offered as the `idempotencyKey` argument). */
  idempotencyKey: boolean;
  /** Whether the operation is long-running (a tool call asks for the job: `Prefer: respond-async`). */
  longRunning: boolean;
}

/** What a tool changes in its operation's input. */
export interface InputShaping {
  /** Body members set by the tool and not offered (`inline: false` of an export). */
  fixedBody?: Record<string, unknown>;
  /** A component schema used for the body instead of the operation's (a narrower variant). */
  bodySchema?: string;
  /** Query parameters or body members not offered. */
  omit?: readonly string[];
}

/** Resolves `#/components/...` references inline (a reference met again inside itself stays open). */
function resolve(doc: OpenApiDocument, value: unknown, seen: readonly string[] = []): unknown {
  if (Array.isArray(value)) return value.map((item) => resolve(doc, item, seen));
  if (value === null || typeof value !== "object") return value;
  const object = value as Record<string, unknown>;
  const ref = object.$ref;
  if (typeof ref === "string" && ref.startsWith("#/")) {
    if (seen.includes(ref)) return {};
    const target = ref
      .slice(2)
      .split("/")
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc);
    const { $ref: _ignored, ...siblings } = object;
    const resolved = resolve(doc, target, [...seen, ref]) as Record<string, unknown>;
    return { ...resolved, ...(resolve(doc, siblings, seen) as Record<string, unknown>) };
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(object)) out[key] = resolve(doc, item, seen);
  return out;
}

function findOperation(
  doc: OpenApiDocument,
  operationId: string,
): { method: string; path: string; op: OpenApiOperation } {
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (op.operationId === operationId) return { method: method.toUpperCase(), path, op };
    }
  }
  throw new Error(`openapi.yaml has no operation ${operationId}`);
}

/** The tool's input schema and how its arguments map to the operation, from openapi.yaml. */
export function toolInput(
  doc: OpenApiDocument,
  operationId: string,
  shaping: InputShaping = {},
): { inputSchema: JsonSchema; binding: ToolBinding } {
  const { method, path, op } = findOperation(doc, operationId);
  const omit = new Set(shaping.omit ?? []);
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const parameters = (op.parameters ?? []).map((p) => resolve(doc, p) as OpenApiParameter);
  const binding: ToolBinding = {
    method,
    path,
    pathParams: [],
    queryParams: [],
    bodyMembers: [],
    hasBody: false,
    fixedBody: shaping.fixedBody ?? {},
    idempotencyKey: false,
    longRunning: false,
  };
  for (const p of parameters) {
    if (p.in === "header") {
      const name = p.name.toLowerCase();
      if (name === "idempotency-key") binding.idempotencyKey = true;
      if (name === "prefer") binding.longRunning = true;
      continue;
    }
    if ((p.in !== "path" && p.in !== "query") || omit.has(p.name)) continue;
    properties[p.name] = { ...(p.schema ?? {}), ...(p.description ? { description: p.description } : {}) };
    if (p.required || p.in === "path") required.push(p.name);
    if (p.in === "path") binding.pathParams.push(p.name);
    else binding.queryParams.push({ name: p.name, commaSeparated: p.explode === false });
  }
  const body = resolve(doc, op.requestBody) as
    { content?: Record<string, { schema?: JsonSchema }> } | undefined;
  const bodySchema = shaping.bodySchema
    ? (resolve(doc, { $ref: `#/components/schemas/${shaping.bodySchema}` }) as JsonSchema)
    : (body?.content?.["application/json"]?.schema as JsonSchema | undefined);
  if (bodySchema) {
    binding.hasBody = true;
    const members = (bodySchema.properties ?? {}) as Record<string, unknown>;
    const bodyRequired = new Set((bodySchema.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries(members)) {
      if (omit.has(name) || (shaping.fixedBody && name in shaping.fixedBody)) continue;
      if (name in properties) throw new Error(`${operationId}: body member ${name} shadows a parameter`);
      properties[name] = schema;
      binding.bodyMembers.push(name);
      if (bodyRequired.has(name)) required.push(name);
    }
  }
  if (binding.idempotencyKey) {
    properties.idempotencyKey = {
      type: "string",
      minLength: 1,
      maxLength: 255,
      description:
        "Optional Idempotency-Key: a repeated call with the same key answers the first call's job instead of starting another.",
    };
  }
  const inputSchema: JsonSchema = { type: "object", properties, additionalProperties: false };
  if (required.length > 0) inputSchema.required = required;
  return { inputSchema, binding };
}
