import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../src/config.js";
import { createApiKey } from "../src/auth/service.js";
import type { OperationId } from "../src/http/contract.js";
import { loadSpec, type SpecOperation } from "../src/http/spec.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { NOT_BUILT_YET } from "./helpers/not-built.js";
import { startStripeServer, type TestStripe } from "./helpers/stripe-server.js";

// No query, path, body or header value of any built operation may produce a 5xx, and every error
// answer must use a code the operation declares for its status (test/setup.ts fails a test whose
// answers broke the contract: src/http/error-handler.ts reports undeclared codes).

// Payments configured against a local Stripe server, so the money endpoints are probed past their
// 503 `payment_unavailable` of an unconfigured deployment (test/billing-unconfigured.test.ts).
const payments: Partial<Config> = {};
let stripe: TestStripe | undefined;
beforeAll(async () => {
  stripe = await startStripeServer();
  Object.assign(payments, {
    stripeSecretKey: stripe.secretKey,
    stripeWebhookSecret: stripe.webhookSecret,
    stripeApiBase: stripe.apiBase,
  });
});
afterAll(() => stripe?.close());
const t = useTestApp(payments);
const spec = loadSpec();

/** Raw (already URL-encoded where needed) values for a query or path parameter. */
const RAW_VALUES = [
  "1e309",
  "-1e309",
  "NaN",
  "Infinity",
  "-0",
  "0x1F",
  "1.5",
  "-1",
  "0",
  "2147483648",
  "99999999999999999999",
  "",
  "%20",
  "%00",
  "a%00b",
  "%ZZ",
  "%",
  "a,b",
  "%5B%5D",
  "%5B%22a%22",
  "%7B%7D",
  "null",
  "true",
  "%F0%9F%99%82",
  "%E0%A4%A",
  "%5C",
  "'",
  "%22",
  ",,,,",
  "x".repeat(5_000),
];

/** JSON texts for each member of a request body (raw: `1e309` parses to Infinity). */
const MEMBER_VALUES = [
  "1e309",
  "-1e309",
  "-1",
  "0",
  "1.5",
  "2147483648",
  '""',
  '"\\u0000"',
  '"a\\u0000b"',
  '"\\ud800"',
  JSON.stringify("x".repeat(100_000)),
  "[]",
  "[1e309]",
  '[""]',
  '["\\u0000"]',
  "{}",
  '{"a":1e309}',
  "null",
  "true",
];

/** Whole bodies. */
const BODIES = ["[]", "null", '"x"', "1e309", "{", '{"a":', "{}", '{"__proto__":{"x":1}}'];

const PREFER = [
  "wait=99999999999999999999",
  "wait=1e309",
  "wait=-1",
  "respond-async; wait=",
  "x".repeat(2_000),
];
const IDEMPOTENCY_KEYS = ["short", "x".repeat(65), "ünïcødé-key", "key with spaces", "a".repeat(64)];

type Schema = { $ref?: string; properties?: Record<string, unknown>; allOf?: Schema[] };

/** Names of the top-level members of an operation's JSON request body. */
function bodyMembers(operation: SpecOperation): string[] {
  const doc = spec.document as {
    paths: Record<
      string,
      Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> } }>
    >;
    components: { schemas: Record<string, Schema> };
  };
  const resolve = (schema: Schema | undefined): Schema | undefined =>
    schema?.$ref
      ? resolve(doc.components.schemas[schema.$ref.slice(schema.$ref.lastIndexOf("/") + 1)])
      : schema;
  const schema = resolve(
    doc.paths[operation.path]?.[operation.method.toLowerCase()]?.requestBody?.content?.["application/json"]
      ?.schema,
  );
  const parts = [schema, ...(schema?.allOf ?? []).map(resolve)];
  return [...new Set(parts.flatMap((part) => Object.keys(part?.properties ?? {})))];
}

function hasBody(operation: SpecOperation): boolean {
  const doc = spec.document as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
  return doc.paths[operation.path]?.[operation.method.toLowerCase()]?.requestBody !== undefined;
}

interface Probe {
  path: string;
  query?: string;
  body?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

/** Every probe of one operation. */
function probesOf(operation: SpecOperation): Probe[] {
  const pathNames = [...operation.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const pathWith = (name: string | null, raw: string) =>
    operation.path.replace(/\{([^}]+)\}/g, (_all, param: string) => (param === name ? raw : "1"));
  const base = pathWith(null, "");
  const body = hasBody(operation) ? "{}" : undefined;
  const probes: Probe[] = [
    { path: base, body },
    { path: base, query: "unknownParameter=1", body },
  ];
  for (const name of pathNames)
    for (const raw of RAW_VALUES) probes.push({ path: pathWith(name, raw), body });
  for (const param of operation.parameters) {
    if (param.in !== "query") continue;
    for (const raw of RAW_VALUES) probes.push({ path: base, query: `${param.name}=${raw}`, body });
    probes.push({ path: base, query: `${param.name}=1&${param.name}=2`, body });
  }
  for (const param of operation.parameters) {
    if (param.in !== "header") continue;
    const values = param.name.toLowerCase() === "prefer" ? PREFER : IDEMPOTENCY_KEYS;
    for (const value of values) probes.push({ path: base, body, headers: { [param.name]: value } });
  }
  if (body !== undefined) {
    for (const raw of BODIES) probes.push({ path: base, body: raw });
    probes.push({ path: base, body: "x", contentType: "text/plain" });
    for (const member of bodyMembers(operation)) {
      for (const value of MEMBER_VALUES)
        probes.push({ path: base, body: `{${JSON.stringify(member)}:${value}}` });
    }
  }
  return probes;
}

const built = spec.routes.operations.filter((op) => !NOT_BUILT_YET.includes(op.operationId as OperationId));

/**
 * Most probes one test case sends: an operation with more (the lead searches take about 170 query
 * parameters) is probed in several cases, each within the test time limit.
 */
const PROBES_PER_CASE = 400;

/** Each operation's probes, in cases of at most PROBES_PER_CASE. */
const cases = built.flatMap((op) => {
  const all = probesOf(op);
  const parts = Math.ceil(all.length / PROBES_PER_CASE);
  return Array.from({ length: parts }, (_, k) => {
    const name = parts === 1 ? op.operationId : `${op.operationId} (part ${k + 1} of ${parts})`;
    return [name, op, all.slice(k * PROBES_PER_CASE, (k + 1) * PROBES_PER_CASE)] as const;
  });
});

describe("no input produces a 5xx or an undeclared error code", () => {
  it.each(cases)("%s", async (_name, operation, probes) => {
    const { accountId } = await buildAccount(t.ctx.db);
    // Fresh keys: the probes must reach the handler, not the per-key rate limits.
    const keys: string[] = [];
    for (let i = 0; i < Math.ceil(probes.length / 4); i += 1)
      keys.push((await createApiKey(t.ctx.db, accountId, "probe")).apiKey);
    const failures: string[] = [];
    for (let i = 0; i < probes.length; i += 8) {
      await Promise.all(
        probes.slice(i, i + 8).map(async (probe, j) => {
          const url = probe.query === undefined ? probe.path : `${probe.path}?${probe.query}`;
          const agent = t.request();
          const call = agent[operation.method.toLowerCase() as "post"].bind(agent);
          let req = call(url)
            .set("Authorization", `Bearer ${keys[Math.floor((i + j) / 4)]}`)
            .set("Prefer", "respond-async");
          for (const [name, value] of Object.entries(probe.headers ?? {})) req = req.set(name, value);
          if (probe.body !== undefined)
            req = req.set("Content-Type", probe.contentType ?? "application/json").send(probe.body);
          const res = await req;
          if (res.status >= 500)
            failures.push(
              `${res.status} ${res.body?.error} for ${url.slice(0, 120)} ${probe.body?.slice(0, 80) ?? ""}`,
            );
        }),
      );
    }
    expect(failures).toEqual([]);
  });
});
