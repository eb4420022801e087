import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

/** Absolute path of the committed contract. */
export const openapiPath = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "openapi.yaml");

/** What the service needs to know about one operation of the contract. */
export interface SpecOperation {
  operationId: string;
  method: string;
  /** The OpenAPI path template, e.g. `/api/v1/export-formats/{id}`. */
  path: string;
  /** False for operations whose `security` is empty (no API key). */
  requiresKey: boolean;
}

interface CompiledRoute extends SpecOperation {
  pattern: RegExp;
}

const METHODS = ["get", "put", "post", "patch", "delete"] as const;

/** Every operation of openapi.yaml, with a matcher from method + URL path to the operation. */
export class SpecRoutes {
  readonly operations: SpecOperation[];
  private readonly routes: CompiledRoute[];

  constructor(document: unknown) {
    const doc = document as {
      security?: unknown[];
      paths: Record<string, Record<string, { operationId: string; security?: unknown[] }>>;
    };
    const globalSecurity = doc.security ?? [];
    const routes: CompiledRoute[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      const source = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+");
      const pattern = new RegExp(`^${source}/?$`);
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const security = op.security ?? globalSecurity;
        const requiresKey =
          security.length > 0 && !security.every((s) => Object.keys(s as object).length === 0);
        routes.push({
          operationId: op.operationId,
          method: method.toUpperCase(),
          path,
          requiresKey,
          pattern,
        });
      }
    }
    // Literal segments win over parameters: `/leads/preview` before `/leads/{id}`.
    routes.sort((a, b) => literalWeight(b.path) - literalWeight(a.path));
    this.routes = routes;
    this.operations = routes.map(({ pattern: _pattern, ...op }) => op);
  }

  /** The operation for a request, or undefined when the contract has none. */
  match(method: string, urlPath: string): SpecOperation | undefined {
    for (const route of this.routes) {
      if (route.method === method && route.pattern.test(urlPath)) return route;
    }
    return undefined;
  }
}

function literalWeight(path: string): number {
  return path.split("/").filter((segment) => segment && !segment.startsWith("{")).length;
}

let cached: { text: string; document: unknown } | undefined;

/** The contract as text and as a parsed document (read once per process). */
export function loadSpec(): { text: string; document: unknown } {
  if (!cached) {
    const text = readFileSync(openapiPath, "utf8");
    cached = { text, document: parse(text) };
  }
  return cached;
}
