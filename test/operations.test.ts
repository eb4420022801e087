import { describe, expect, it } from "vitest";
import { operationHandlers } from "../src/app/handlers.js";
import { NOT_BUILT, type OperationId } from "../src/http/contract.js";
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
    expect(NOT_BUILT_YET).toHaveLength(41);
  });

  it("routes every built operation and answers 501 not_implemented for each one not built", async () => {
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
  });
});
