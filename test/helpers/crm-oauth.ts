import { sql } from "kysely";
import type { TestApp } from "./app.js";

type Auth = { Authorization: string };

/**
 * The two OAuth steps of a CRM provider as a client takes them: `connectLink` asks the service for
 * the authorization link, `callback` comes back to the service as the CRM's authorization page
 * would, with the link's `state` and a code the fake CRM issued (`issueCode`, given the link).
 */
export function crmOAuth(
  t: TestApp,
  provider: "crm_contacts" | "crm_leads" | "crm_deals",
  issueCode: (authorizationUrl: string) => string,
) {
  async function connectLink(auth: Auth, body: object = {}) {
    const res = await t
      .request()
      .post(`/api/v1/integrations/${provider}/connect`)
      .set(auth)
      .send(body)
      .expect(200);
    return res.body.data as { provider: string; authorizationUrl: string; expiresAt: string };
  }
  async function callback(authorizationUrl: string, code?: string) {
    const url = new URL(authorizationUrl);
    const query = new URLSearchParams({
      state: url.searchParams.get("state")!,
      code: code ?? issueCode(authorizationUrl),
    });
    return t.request().get(`/api/v1/integrations/oauth/callback?${query}`);
  }
  return { connectLink, callback };
}

/** The `redirect_uri` an authorization link names (what the contacts and deals fakes issue codes for). */
export function redirectOf(authorizationUrl: string): string {
  return new URL(authorizationUrl).searchParams.get("redirect_uri")!;
}

/** The payloads of the mail jobs queued so far. */
export async function mailJobs(t: TestApp): Promise<unknown[]> {
  const { rows } = await sql<{ payload: unknown }>`
    select j.payload from graphile_worker._private_jobs j
    join graphile_worker._private_tasks k on k.id = j.task_id
    where k.identifier = 'mail__send'`.execute(t.ctx.db);
  return rows.map((r) => r.payload);
}
