import { spawn } from "node:child_process";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { revokeKey } from "../src/auth/service.js";
import { useJobRunner, useTestApp } from "./helpers/app.js";
import { buildWordLeads } from "./helpers/export-job-factories.js";
import { buildAccount } from "./helpers/factories.js";
import { listenPort } from "./helpers/ports.js";
import { startReceiver, verifyDelivery, type Receiver } from "./helpers/webhook-receiver.js";

const t = useTestApp();
useJobRunner(t);
const servers: HttpServer[] = [];
let base: string;
let receiver: Receiver;

async function listen(app: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  base = await listen(t.app);
  receiver = await startReceiver();
});
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await receiver?.close();
});

/** An SDK client over Streamable HTTP; `fetch` may send each request elsewhere. */
async function connect(apiKey: string, fetchImpl?: typeof fetch): Promise<Client> {
  const client = new Client({ name: "test-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  await client.connect(transport);
  return client;
}

type CallResult = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string }[];
  _meta?: Record<string, unknown>;
};

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallResult> {
  return (await client.callTool({ name, arguments: args })) as CallResult;
}

const data = (result: CallResult) => result.structuredContent?.data as Record<string, unknown>;

/** A raw JSON-RPC POST (for the HTTP-level answers: 401, 403, 429, 405). */
function rawPost(auth: Record<string, string>, body: unknown = { jsonrpc: "2.0", id: 1, method: "ping" }) {
  return fetch(`${base}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...auth },
    body: JSON.stringify(body),
  });
}

describe("the tool catalogue", () => {
  it("lists tools with inputs generated from the contract and truthful hints", async () => {
    const { apiKey } = await buildAccount(t.ctx.db);
    const client = await connect(apiKey);
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of [
      "get_job",
      "push_lead_to_integration",
      "search_leads",
      "preview_leads",
      "export_leads",
    ]) {
      expect(byName.has(name), name).toBe(true);
    }
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.description, tool.name).toMatch(/credit|Free/i);
      expect(tool.annotations).toMatchObject({
        readOnlyHint: expect.any(Boolean),
        destructiveHint: expect.any(Boolean),
        idempotentHint: expect.any(Boolean),
        openWorldHint: expect.any(Boolean),
      });
    }
    // Pushing own lead data stays REST only; an export always answers links, never a file.
    expect(Object.keys(byName.get("push_lead_to_integration")!.inputSchema.properties!).sort()).toEqual([
      "id",
      "leadId",
    ]);
    expect(byName.get("export_leads")!.inputSchema.properties).not.toHaveProperty("inline");
    expect(byName.get("export_leads")!.inputSchema.properties).toHaveProperty("idempotencyKey");
    expect(byName.get("search_leads")!.inputSchema.properties).toHaveProperty("positiveKeywords");
    expect(byName.get("get_profile")!.annotations?.readOnlyHint).toBe(true);
    expect(byName.get("delete_filter_preset")!.annotations?.destructiveHint).toBe(true);
    expect(byName.get("search_leads")!.annotations?.readOnlyHint).toBe(false);
    expect(byName.get("test_integration")!.annotations?.openWorldHint).toBe(true);
    await client.close();
  });
});

describe("tool calls", () => {
  it("answers the profile, and a search charges like REST", async () => {
    const { apiKey, accountId, auth } = await buildAccount(t.ctx.db);
    const client = await connect(apiKey);
    const profile = await call(client, "get_profile");
    expect(profile.isError).toBeUndefined();
    const before = data(profile).totalCreditsRemaining as number;

    const { word } = await buildWordLeads(t.ctx.db, 3);
    const search = await call(client, "search_leads", { positiveKeywords: [word] });
    expect(search.isError).toBeUndefined();
    expect(data(search)).toMatchObject({ creditsUsed: 3 });
    expect(data(search).leads).toHaveLength(3);
    // The same search again: the sticky rule, nothing charged.
    const again = await call(client, "search_leads", { positiveKeywords: [word] });
    expect(data(again)).toMatchObject({ creditsUsed: 0 });
    const rest = await t.request().get("/api/v1/me").set(auth).expect(200);
    expect(rest.body.data.totalCreditsRemaining).toBe(before - 3);
    const methods = await t.ctx.db
      .selectFrom("lead_export_history")
      .select("export_method")
      .where("account_id", "=", accountId)
      .execute();
    expect(methods.map((m) => m.export_method)).toEqual(["api", "api", "api"]);
    await client.close();
  });

  it("starts an export as a job that get_job completes with signed links", async () => {
    const { apiKey } = await buildAccount(t.ctx.db);
    const client = await connect(apiKey);
    const { word } = await buildWordLeads(t.ctx.db, 2);
    const started = await call(client, "export_leads", { positiveKeywords: [word], fileType: "csv" });
    expect(started.isError).toBeUndefined();
    const jobId = started._meta?.jobId as string;
    expect(jobId).toMatch(/^job_/);
    let result = started;
    for (let i = 0; i < 100 && result._meta?.jobStatus !== "completed"; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      result = await call(client, "get_job", { jobId });
      expect(result.isError).toBeUndefined();
    }
    expect(result._meta?.jobStatus).toBe("completed");
    expect(data(result)).toMatchObject({ leadCount: 2, creditsUsed: 2 });
    const [file] = data(result).files as { directDownloadUrl: string }[];
    const download = await fetch(file!.directDownloadUrl.replace(/^https?:\/\/[^/]+/, base));
    expect(download.status).toBe(200);
    expect(await download.text()).toContain(word);
    await client.close();
  });

  it("connects a webhook through MCP (createdVia mcp) and pushes a lead to it, signed and recorded", async () => {
    const { apiKey, auth } = await buildAccount(t.ctx.db);
    const client = await connect(apiKey);
    const created = await call(client, "create_webhook_integration", {
      provider: "generic_webhook",
      displayName: "From the assistant",
      targetUrl: receiver.url("/mcp-push"),
      events: ["lead.created"],
    });
    expect(created.isError).toBeUndefined();
    const { integration, signingSecret } = data(created) as {
      integration: { id: number };
      signingSecret: string;
    };
    const paused = await call(client, "update_integration", { id: integration.id, status: "disabled" });
    expect(paused.isError).toBeUndefined();
    const rest = await t.request().get(`/api/v1/integrations/${integration.id}`).set(auth).expect(200);
    expect(rest.body.data).toMatchObject({
      status: "disabled",
      createdVia: { channel: "mcp" },
      lastChangedVia: { channel: "mcp" },
    });
    await t
      .request()
      .patch(`/api/v1/integrations/${integration.id}`)
      .set(auth)
      .send({ status: "connected" })
      .expect(200);

    // A push is sent in the request (one attempt), signed, and recorded in the delivery log.
    const { ids } = await buildWordLeads(t.ctx.db, 1);
    const pushed = await call(client, "push_lead_to_integration", { id: integration.id, leadId: ids[0] });
    expect(pushed.isError).toBeUndefined();
    const [delivery] = receiver.at("/mcp-push");
    verifyDelivery(delivery!, signingSecret);
    expect(delivery!.event).toMatchObject({ type: "lead.created", data: { id: ids[0] } });
    const log = await call(client, "list_integration_deliveries", { id: integration.id });
    const entries = log.structuredContent?.data as { status: string; attemptCount: number }[];
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ status: "success", attemptCount: 1 });
    await client.close();
  });

  it("answers bad arguments and REST errors as tool errors with the REST code", async () => {
    const { apiKey } = await buildAccount(t.ctx.db);
    const client = await connect(apiKey);
    const unknownArg = await call(client, "get_job", { jobId: "job_x", bogus: 1 });
    expect(unknownArg.isError).toBe(true);
    expect(unknownArg.structuredContent).toMatchObject({ error: "validation_error" });
    const missing = await call(client, "get_integration_deliveries_missing_tool");
    expect(missing.isError).toBe(true);
    const badValue = await call(client, "search_leads", { positiveKeywords: ["x"], limit: 100_000 });
    expect(badValue.isError).toBe(true);
    expect(badValue.structuredContent).toMatchObject({
      error: "validation_error",
      message: expect.any(String),
    });
    const notFound = await call(client, "get_job", { jobId: "job_unknown" });
    expect(notFound.structuredContent).toMatchObject({ error: "job_not_found" });
    await client.close();
  });
});

describe("keys, limits and processes", () => {
  it("refuses a missing, invalid or revoked key with 401 and an unpaid account with 403, as REST", async () => {
    expect((await rawPost({})).status).toBe(401);
    expect((await rawPost({ Authorization: "Bearer svck_nope" })).status).toBe(401);
    const revoked = await buildAccount(t.ctx.db);
    await revokeKey(t.ctx.db, revoked.apiKey);
    const res = await rawPost(revoked.auth);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: "unauthorized", message: expect.any(String) });
    const unpaid = await buildAccount(t.ctx.db, { status: "canceled" });
    expect((await rawPost(unpaid.auth)).status).toBe(403);
    await expect(connect(revoked.apiKey)).rejects.toThrow();
  });

  it("answers JSON to a client that does not take SSE, and SSE to one that does", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const list = { jsonrpc: "2.0", id: 7, method: "tools/list" };
    const json = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...auth },
      body: JSON.stringify(list),
    });
    expect(json.status).toBe(200);
    expect(json.headers.get("content-type")).toContain("application/json");
    const body = (await json.json()) as { id: number; result: { tools: unknown[] } };
    expect(body.id).toBe(7);
    expect(body.result.tools.length).toBeGreaterThan(10);
    const sse = await rawPost(auth, list);
    expect(sse.headers.get("content-type")).toContain("text/event-stream");
    expect(await sse.text()).toContain('"tools"');
  });

  it("answers 405 to GET and DELETE (the stateless transport keeps no streams or sessions)", async () => {
    expect((await fetch(`${base}/mcp`)).status).toBe(405);
    expect((await fetch(`${base}/mcp`, { method: "DELETE" })).status).toBe(405);
  });

  it("serves one client from two API processes on one database", async () => {
    const { apiKey } = await buildAccount(t.ctx.db);
    // A second API process (`npm start`'s entry point, ROLE=api) on the test database.
    const port = await listenPort();
    const second = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: {
        ...process.env,
        DATABASE_URL: t.database.url,
        ROLE: "api",
        HOST: "127.0.0.1",
        PORT: String(port),
        LOG_LEVEL: "silent",
        DATA_DIR: t.ctx.config.dataDir,
        SIGNING_SECRET: t.ctx.signingSecret,
      },
      stdio: "ignore",
    });
    try {
      for (let i = 0; ; i += 1) {
        const up = await fetch(`${second}/api/v1/health`).then(
          (r) => r.ok,
          () => false,
        );
        if (up) break;
        if (i > 300) throw new Error("the second API process did not start");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const hosts = new Set<string>();
      let n = 0;
      const alternating: typeof fetch = (input, init) => {
        n += 1;
        const url = String(input instanceof Request ? input.url : input);
        const target = n % 2 === 0 ? url.replace(base, second) : url;
        hosts.add(new URL(target).port);
        return fetch(target, init);
      };
      const client = await connect(apiKey, alternating);
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(10);
      const profile = await call(client, "get_profile");
      expect(profile.isError).toBeUndefined();
      const presets = await call(client, "list_filter_presets");
      expect(presets.isError).toBeUndefined();
      expect(hosts.size).toBe(2);
      await client.close();
    } finally {
      child.kill("SIGTERM");
    }
  }, 60_000);

  // Last: it spends the file's per-IP budget.
  it("limits each client IP to 60 requests a minute (429 with Retry-After)", async () => {
    const { auth } = await buildAccount(t.ctx.db);
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 61; i += 1) {
      last = await rawPost(auth);
      statuses.push(last.status);
    }
    expect(statuses.filter((s) => s !== 429).length).toBeLessThanOrEqual(60);
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await last!.json()).toMatchObject({ error: "Rate limit exceeded" });
  });
});
