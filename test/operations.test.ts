import { describe, expect, it } from "vitest";
import { operationHandlers } from "../src/app/handlers.js";
import { NOT_BUILT, type OperationId } from "../src/http/contract.js";
import { invalidInput } from "../src/http/errors.js";
import { loadSpec } from "../src/http/spec.js";
import { useTestApp } from "./helpers/app.js";
import { NOT_BUILT_YET } from "./helpers/not-built.js";
import { buildAccount } from "./helpers/factories.js";

const t = useTestApp();

const spec = loadSpec().routes;

/** A concrete URL of an operation: `1` for every path parameter. */
function urlOf(path: string): string {
  return path.replace(/\{[^}]+\}/g, "1");
}

describe("the handler registry (src/app/handlers.ts)", () => {
  it("has exactly one entry per operation of openapi.yaml", () => {
    const registry = operationHandlers(t.ctx);
    expect(Object.keys(registry).sort()).toEqual(spec.operations.map((op) => op.operationId).sort());
  });

  it("lists as not built exactly the operations that are not built yet", () => {
    const registry = operationHandlers(t.ctx);
    const notBuilt = Object.entries(registry)
      .filter(([, handler]) => handler === NOT_BUILT)
      .map(([id]) => id);
    expect(notBuilt.sort()).toEqual([...NOT_BUILT_YET].sort());
  });

  // Every operation (78 with auto-refine and auto top-up), one request each: slow on a loaded machine.
  it(
    "routes every built operation and answers 501 not_implemented for each one not built",
    { timeout: 120_000 },
    async () => {
      const { auth } = await buildAccount(t.ctx.db);
      for (const op of spec.operations) {
        const built = !NOT_BUILT_YET.includes(op.operationId as OperationId);
        // No body and no query: a built operation answers (2xx, or 4xx for missing input); an operation
        // not built answers 501 whatever its input.
        const agent = t.request();
        const call = agent[op.method.toLowerCase() as "get"].bind(agent);
        const res = await call(urlOf(op.path)).set(auth).set("Prefer", "respond-async");
        expect(res.body.message, `${op.operationId} is routed`).not.toBe("No such endpoint.");
        if (built) expect(res.status, `${op.operationId} is built`).not.toBe(501);
        else
          expect(res.body, `${op.operationId} is not built`).toEqual({
            error: "not_implemented",
            message: expect.any(String),
          });
      }
    },
  );
});

describe("input errors use the 400 code each operation declares", () => {
  const codeOf = (operationId: OperationId) =>
    invalidInput(spec.byId(operationId), "Invalid request.", [{ path: ["body"], message: "x" }]).code;

  it("picks validation_error, invalid_request or bad_request from openapi.yaml", () => {
    expect(codeOf("getEnrichment")).toBe("validation_error");
    expect(codeOf("listEnrichments")).toBe("validation_error");
    expect(codeOf("createEnrichment")).toBe("invalid_request");
    expect(codeOf("generateKeywords")).toBe("bad_request");
    expect(codeOf("exportLeads")).toBe("validation_error");
  });

  it("answers GET /export-history?limit=1e309 with 400 validation_error, not 500", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    for (const query of ["limit=1e309", "offset=1e309", "limit=-1e309"]) {
      const res = await t.request().get(`/api/v1/export-history?${query}`).set(auth).expect(400);
      expect(res.body).toMatchObject({
        error: "validation_error",
        details: [{ path: ["query", query.split("=")[0]], message: expect.any(String) }],
      });
    }
  });
});
