import { describe, expect, it } from "vitest";
import { parsePrefer, waitMillis } from "../src/jobs/prefer.js";
import { loadConfig } from "../src/config.js";
import { canonicalJson, requestHash } from "../src/jobs/request-hash.js";

describe("parsePrefer", () => {
  it("honours wait=N within the bound and respond-async, in any case and order", () => {
    expect(parsePrefer("wait=10", 75)).toEqual({ waitSeconds: 10, respondAsync: false, applied: "wait=10" });
    expect(parsePrefer("Respond-Async", 75)).toEqual({
      waitSeconds: undefined,
      respondAsync: true,
      applied: "respond-async",
    });
    expect(parsePrefer(["wait = 0", "respond-async"], 75).applied).toBe("respond-async, wait=0");
    expect(parsePrefer('wait="5"; foo=bar, handling=lenient', 75).waitSeconds).toBe(5);
  });

  it("ignores invalid, out-of-range and repeated values", () => {
    expect(parsePrefer("wait=76", 75).applied).toBeUndefined();
    expect(parsePrefer("wait=61", 60).applied).toBeUndefined();
    expect(parsePrefer("wait=-1, wait=abc, wait=1.5, wait", 75).applied).toBeUndefined();
    expect(parsePrefer("wait=3, wait=4", 75).waitSeconds).toBe(3);
    expect(parsePrefer("respond-async=1", 75).respondAsync).toBe(false);
    expect(parsePrefer(undefined, 75).applied).toBeUndefined();
  });

  it("waits wait=N, else nothing with respond-async, else the default", () => {
    expect(waitMillis(parsePrefer("wait=2", 75), 75_000)).toBe(2_000);
    expect(waitMillis(parsePrefer("respond-async", 75), 75_000)).toBe(0);
    expect(waitMillis(parsePrefer("respond-async, wait=3", 75), 75_000)).toBe(3_000);
    expect(waitMillis(parsePrefer("wait=100", 75), 75_000)).toBe(75_000);
  });
});

describe("requestHash", () => {
  it("does not depend on key order; any other difference changes it", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}',
    );
    const base = { method: "POST", path: "/api/v1/leads/export", query: {}, body: { a: 1, b: [1, 2] } };
    expect(requestHash(base)).toBe(requestHash({ ...base, method: "post", body: { b: [1, 2], a: 1 } }));
    expect(requestHash(base)).not.toBe(requestHash({ ...base, body: { a: 1, b: [2, 1] } }));
    expect(requestHash(base)).not.toBe(requestHash({ ...base, path: "/api/v1/ai/suggest-categories" }));
    expect(requestHash(base)).not.toBe(requestHash({ ...base, query: { x: "1" } }));
  });
});

describe("JOB_WAIT_SECONDS", () => {
  it("waits 75 s by default; JOB_WAIT_SECONDS sets 0-75", () => {
    expect(loadConfig({}).jobWaitMs).toBe(75_000);
    expect(loadConfig({ JOB_WAIT_SECONDS: "2" }).jobWaitMs).toBe(2_000);
    expect(loadConfig({ JOB_WAIT_SECONDS: "0.5" }).jobWaitMs).toBe(500);
    expect(() => loadConfig({ JOB_WAIT_SECONDS: "90" })).toThrow(/JOB_WAIT_SECONDS/);
    expect(() => loadConfig({ JOB_WAIT_SECONDS: "soon" })).toThrow(/JOB_WAIT_SECONDS/);
  });
});
