import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CORE_SCHEMA, load } from "js-yaml";

/** Absolute path of the committed contract. */
export const openapiPath = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "openapi.yaml");

/** One parameter of an operation, as far as decoding it needs. */
export interface SpecParameter {
  name: string;
  in: "path" | "query" | "header";
  /** `integer`, `number`, `string`, `boolean`, `array`, ... (`unknown` when not stated). */
  type: string;
}

/** What the service needs to know about one operation of the contract. */
export interface SpecOperation {
  operationId: string;
  method: string;
  /** The OpenAPI path template, e.g. `/api/v1/export-formats/{id}`. */
  path: string;
  /** False for operations whose `security` is empty (no API key). */
  requiresKey: boolean;
  parameters: SpecParameter[];
  /** Its path, query and header parameters, and those of them that are numbers (computed once). */
  pathParameters: SpecParameter[];
  queryParameters: SpecParameter[];
  headerParameters: SpecParameter[];
  numericParameters: SpecParameter[];
  /** The `error` codes the operation declares, by status (`{400: {"validation_error"}}`). */
  errorCodes: ReadonlyMap<number, ReadonlySet<string>>;
}

interface CompiledRoute extends SpecOperation {
  pattern: RegExp;
  /** Names of the path parameters, in the order of the pattern's groups. */
  pathNames: string[];
}

/** An operation matched to a request, with its raw (still encoded) path parameter values. */
export interface MatchedOperation {
  operation: SpecOperation;
  rawPathParams: Record<string, string>;
}

type Schema = { $ref?: string; type?: string; enum?: unknown[]; anyOf?: Schema[]; oneOf?: Schema[] } & {
  properties?: Record<string, Schema>;
};
interface Document {
  security?: unknown[];
  paths: Record<string, Record<string, RawOperation | undefined>>;
  components?: { schemas?: Record<string, Schema>; parameters?: Record<string, RawParameter> };
}
interface RawParameter {
  $ref?: string;
  name: string;
  in: string;
  schema?: Schema;
}
interface RawOperation {
  operationId: string;
  security?: unknown[];
  parameters?: RawParameter[];
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

const METHODS = ["get", "put", "post", "patch", "delete"] as const;

/** The path parameters of an operation that has none. */
const NO_PARAMS: Record<string, string> = Object.freeze({});

function lastSegment(ref: string): string {
  return ref.slice(ref.lastIndexOf("/") + 1);
}

/** The `error` values a response schema can carry (through `$ref`, `anyOf` and `oneOf`). */
function errorCodesOf(doc: Document, schema: Schema | undefined, seen = new Set<string>()): string[] {
  if (!schema) return [];
  if (schema.$ref) {
    const name = lastSegment(schema.$ref);
    if (seen.has(name)) return [];
    seen.add(name);
    return errorCodesOf(doc, doc.components?.schemas?.[name], seen);
  }
  const variants = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])];
  if (variants.length > 0) return variants.flatMap((variant) => errorCodesOf(doc, variant, seen));
  const values = schema.properties?.error?.enum ?? [];
  return values.filter((value): value is string => typeof value === "string");
}

function parametersOf(doc: Document, op: RawOperation): SpecParameter[] {
  return (op.parameters ?? []).map((raw) => {
    const param = raw.$ref ? doc.components?.parameters?.[lastSegment(raw.$ref)] : raw;
    if (!param) throw new Error(`unresolved parameter ${raw.$ref}`);
    const schema = param.schema?.$ref
      ? doc.components?.schemas?.[lastSegment(param.schema.$ref)]
      : param.schema;
    return {
      name: param.name,
      in: param.in as SpecParameter["in"],
      type: schema?.type ?? "unknown",
    };
  });
}

function declaredErrors(doc: Document, op: RawOperation): Map<number, Set<string>> {
  const byStatus = new Map<number, Set<string>>();
  for (const [status, response] of Object.entries(op.responses ?? {})) {
    const codes = errorCodesOf(doc, response.content?.["application/json"]?.schema);
    if (codes.length > 0) byStatus.set(Number(status), new Set(codes));
  }
  return byStatus;
}

/** Every operation of openapi.yaml, with a matcher from method + URL path to the operation. */
export class SpecRoutes {
  readonly operations: SpecOperation[];
  private readonly routes: CompiledRoute[];

  constructor(document: unknown) {
    const doc = document as Document;
    const globalSecurity = doc.security ?? [];
    const routes: CompiledRoute[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      const pathNames = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
      const source = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "([^/]+)");
      const pattern = new RegExp(`^${source}/?$`);
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const security = op.security ?? globalSecurity;
        const requiresKey =
          security.length > 0 && !security.every((s) => Object.keys(s as object).length === 0);
        const parameters = parametersOf(doc, op);
        routes.push({
          operationId: op.operationId,
          method: method.toUpperCase(),
          path,
          requiresKey,
          parameters,
          pathParameters: parameters.filter((p) => p.in === "path"),
          queryParameters: parameters.filter((p) => p.in === "query"),
          headerParameters: parameters.filter((p) => p.in === "header"),
          numericParameters: parameters.filter(
            (p) => (p.in === "path" || p.in === "query") && (p.type === "integer" || p.type === "number"),
          ),
          errorCodes: declaredErrors(doc, op),
          pattern,
          pathNames,
        });
      }
    }
    // Literal segments win over parameters: `/leads/preview` before `/leads/{id}`.
    routes.sort((a, b) => literalWeight(b.path) - literalWeight(a.path));
    this.routes = routes;
    this.operations = routes.map(({ pattern: _pattern, pathNames: _names, ...op }) => op);
  }

  /** The operation for a request, or undefined when the contract has none. */
  match(method: string, urlPath: string): MatchedOperation | undefined {
    for (const route of this.routes) {
      if (route.method !== method) continue;
      if (route.pathNames.length === 0) {
        if (route.pattern.test(urlPath)) return { operation: route, rawPathParams: NO_PARAMS };
        continue;
      }
      const found = route.pattern.exec(urlPath);
      if (!found) continue;
      const rawPathParams: Record<string, string> = {};
      route.pathNames.forEach((name, i) => {
        rawPathParams[name] = found[i + 1]!;
      });
      return { operation: route, rawPathParams };
    }
    return undefined;
  }

  /** The operation with this id (every id of the contract has one). */
  byId(operationId: string): SpecOperation | undefined {
    return this.operations.find((op) => op.operationId === operationId);
  }
}

function literalWeight(path: string): number {
  return path.split("/").filter((segment) => segment && !segment.startsWith("{")).length;
}

let cached: { text: string; document: unknown; routes: SpecRoutes } | undefined;

/** The contract as text, as a parsed document and as routes (read once per process). */
export function loadSpec(): { text: string; document: unknown; routes: SpecRoutes } {
  if (!cached) {
    const text = readFileSync(openapiPath, "utf8");
    // js-yaml with the YAML 1.2 core schema reads openapi.yaml into the same document as the
    // `yaml` package (test/system.test.ts compares them) in about a seventh of the time, and with
    // far less garbage: `yaml` took 1.06 s and left the process 160 MB resident
    // (docs/performance.md, 2026-11-28).
    const document = load(text, { schema: CORE_SCHEMA }) as unknown;
    cached = { text, document, routes: new SpecRoutes(document) };
  }
  return cached;
}
