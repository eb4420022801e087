import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import createClient from "openapi-fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { paths } from "../generated/api.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";

// A client generated from openapi.yaml (openapi-typescript + openapi-fetch) type-checks calls to
// the contract: `npm run typecheck` compiles this file, so a drift in the types fails CI.
const t = useTestApp();
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = t.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

type Client = ReturnType<typeof createClient<paths>>;

/**
 * Compile-time check (run by `npm run typecheck`): the generated types accept these calls and
 * type their answers. Their behaviour is tested with the endpoints themselves.
 */
export async function typedCalls(client: Client): Promise<unknown[]> {
  const leads = await client.GET("/api/v1/leads", {
    params: { query: { positiveKeywords: ["plumb", "roof"], stateInclude: ["TX"], limit: 50 } },
  });
  const leadNames: (string | null)[] | undefined = leads.data?.data.leads.map((lead) => lead.companyName);
  const created = await client.POST("/api/v1/integrations/webhook", {
    body: {
      provider: "generic_webhook",
      displayName: "My receiver",
      targetUrl: "https://hooks.example.com/leads",
      events: ["lead.created"],
    },
  });
  const secret: string | undefined = created.data?.data.signingSecret;
  return [leadNames, secret];
}

describe("a client generated from openapi.yaml", () => {
  it("calls GET /me with typed inputs and outputs", async () => {
    const { apiKey, accountId } = await buildAccount(t.ctx.db);
    const client: Client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });
    const me = await client.GET("/api/v1/me");
    const profileId: number | undefined = me.data?.data.id;
    const remaining: number | undefined = me.data?.data.totalCreditsRemaining;
    expect(profileId).toBe(accountId);
    expect(remaining).toBe(2000);
    expect(me.response.headers.get("X-RateLimit-Limit")).toBe("600");
  });
});
