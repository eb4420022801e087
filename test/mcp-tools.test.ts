import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLS } from "../src/mcp/catalog.js";
import { useJobRunner, useTestApp } from "./helpers/app.js";
import { buildWordLeads } from "./helpers/export-job-factories.js";
import { buildAccount } from "./helpers/factories.js";
import { startReceiver, type Receiver } from "./helpers/webhook-receiver.js";

// Every tool of the catalogue, called on real data through the SDK's client: each answers what
// its REST operation answers (no tool error, no transport failure).
const t = useTestApp();
useJobRunner(t);
let server: HttpServer;
let base: string;
let receiver: Receiver;

beforeAll(async () => {
  server = createServer(t.app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver = await startReceiver();
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await receiver?.close();
});

type Result = {
  isError?: boolean;
  structuredContent?: { data?: unknown; error?: string };
  _meta?: { jobId?: string; jobStatus?: string };
};

describe("every tool", () => {
  it("answers on real data as its REST operation does", async () => {
    const { apiKey } = await buildAccount(t.ctx.db, { permanentCredits: 1_000 });
    const client = new Client({ name: "every-tool", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
      }),
    );
    const called = new Set<string>();
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      called.add(name);
      const result = (await client.callTool({ name, arguments: args })) as Result;
      expect(result.isError, `${name}: ${JSON.stringify(result.structuredContent)}`).toBeUndefined();
      return result;
    };
    const data = <T>(result: Result) => result.structuredContent?.data as T;
    // Jobs are awaited over REST (Prefer: wait), so the MCP calls stay within the per-IP limit of
    // 60 a minute; get_job then answers the finished job through MCP once.
    const untilDone = async (started: Result) => {
      const jobId = started._meta?.jobId;
      expect(jobId).toMatch(/^job_/);
      for (let i = 0; i < 10; i += 1) {
        const res = await t
          .request()
          .get(`/api/v1/jobs/${jobId}`)
          .set({ Authorization: `Bearer ${apiKey}`, Prefer: "wait=10" });
        if (res.headers["x-svc-job-status"] === "completed") break;
      }
      const result = await call("get_job", { jobId });
      expect(result._meta?.jobStatus, JSON.stringify(result)).toBe("completed");
      return result;
    };

    const { word, ids } = await buildWordLeads(t.ctx.db, 3);
    await call("get_profile");
    await call("update_profile", { companyName: "Assistant Plumbing" });
    await call("preview_leads", { positiveKeywords: [word] });
    await call("search_leads", { positiveKeywords: [word], limit: 2 });
    await untilDone(await call("export_leads", { positiveKeywords: [word], fileType: "csv" }));
    const history = data<{ id: number }[]>(await call("list_export_history"));
    await call("get_export_download_url", { id: history[0]!.id });

    const received = data<{ id: number }[]>(await call("list_lead_export_history"));
    const trackingIds = received.map((entry) => entry.id);
    await untilDone(await call("refresh_lead_export_history", { trackingIds }));
    await untilDone(await call("re_export_lead_export_history", { trackingIds }));
    await untilDone(await call("refresh_and_export_lead_export_history", { trackingIds }));

    const preset = data<{ id: number }>(
      await call("create_filter_preset", { name: "Assistant preset", filters: { positiveKeywords: [word] } }),
    );
    await call("list_filter_presets");
    const list = data<{ id: number }>(
      await call("create_keyword_list", { name: "Trades", type: "positive", keywords: ["plumber"] }),
    );
    await call("update_keyword_list", {
      id: list.id,
      name: "Trades",
      type: "positive",
      keywords: ["roofer"],
    });
    await call("list_keyword_lists");
    const refined = data<{ id: number }>(
      await call("create_keyword_list", {
        name: "Refined trades",
        type: "positive",
        keywords: ["plumb"],
        sourceCategories: ["Plumbing"],
      }),
    );
    await call("enable_auto_refine", { listId: refined.id });
    await call("get_auto_refine_status", { listId: refined.id });
    await call("disable_auto_refine", { listId: refined.id });
    await call("delete_keyword_list", { id: list.id });
    const added = data<{ added: { id: number }[] }>(
      await call("add_export_blacklist_entries", {
        entries: [{ entryType: "domain", value: "blocked.example" }],
      }),
    );
    await call("list_export_blacklist");
    await call("delete_export_blacklist_entry", { id: added.added[0]!.id });
    await call("list_export_formats");

    const created = data<{ integration: { id: number } }>(
      await call("create_webhook_integration", {
        provider: "generic_webhook",
        displayName: "Assistant hook",
        targetUrl: receiver.url("/every-tool"),
        events: ["lead.created"],
      }),
    );
    const integrationId = created.integration.id;
    await call("list_integrations");
    await call("update_integration", { id: integrationId, displayName: "Assistant hook 2" });
    await call("test_integration", { id: integrationId });
    await call("push_lead_to_integration", { id: integrationId, leadId: ids[2] });
    await call("list_integration_deliveries", { id: integrationId });

    const schedule = data<{ id: number }>(
      await (async () => {
        const res = await t
          .request()
          .post("/api/v1/email-schedules")
          .set({ Authorization: `Bearer ${apiKey}` })
          .send({
            name: "Daily",
            filterPresetId: preset.id,
            intervalValue: 1,
            recipients: [{ email: "rep@example.com" }],
          })
          .expect(201);
        return { structuredContent: res.body } as Result;
      })(),
    );
    await call("list_email_schedules");
    await call("trigger_email_schedule", { id: schedule.id });

    const run = data<{ id: number }>(
      await call("start_enrichment", { urls: [`https://${word}-0.example.org/contact`], maxCredits: 10 }),
    );
    await call("list_enrichments");
    let status = "";
    for (let i = 0; i < 300 && !["completed", "partial", "failed"].includes(status); i += 1) {
      const res = await t
        .request()
        .get(`/api/v1/enrichments/${run.id}`)
        .set({ Authorization: `Bearer ${apiKey}` });
      status = (res.body.data as { status: string }).status;
      if (!["completed", "partial", "failed"].includes(status)) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe("completed");
    await call("get_enrichment", { id: run.id });
    await call("get_enrichment_download_url", { id: run.id });

    await untilDone(
      await call("suggest_categories", {
        companyName: "Assistant Plumbing",
        companyDescription: "Plumbing repairs for homes",
        productService: "Software for plumbers",
      }),
    );
    await call("generate_keywords");
    await call("get_keyword_status");
    await call("delete_filter_preset", { id: preset.id });

    expect([...called].sort()).toEqual(TOOLS.map((tool) => tool.name).sort());
    await client.close();
  }, 120_000);
});
