import type { Insertable } from "kysely";
import { expect } from "vitest";
import { hashApiKey } from "../../src/auth/api-keys.js";
import { revokeKeyByHash } from "../../src/auth/repository.js";
import type { Db } from "../../src/db/database.js";
import type { LeadsTable } from "../../src/db/schema/leads.js";
import type { TestApp } from "./app.js";
import { buildAccount } from "./factories.js";

let sequence = 0;

/** A lead in the lead database; any column can be overridden (the new fields' too). */
export async function buildLead(
  db: Db,
  overrides: Partial<Omit<Insertable<LeadsTable>, "id">> = {},
): Promise<{ leadId: number }> {
  sequence += 1;
  const row = await db
    .insertInto("leads")
    .values({
      external_id: `lead-records-${sequence}-${Date.now()}`,
      company_name: `Acme Plumbing ${sequence}`,
      registered_url: `https://acme-plumbing-${sequence}.com`,
      crawled_url: null,
      email: `info@acme-plumbing-${sequence}.com`,
      phone: "(512) 555-0142",
      city: "Austin",
      state: "TX",
      last_updated: new Date("2026-11-01T10:00:00Z"),
      updated_at: new Date(),
      ...overrides,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return { leadId: row.id };
}

/** One lead export history entry of an account (a new lead is built when none is given). */
export async function buildHistoryEntry(
  db: Db,
  accountId: number,
  overrides: Partial<{
    leadId: number;
    exportedAt: Date;
    exportMethod: string;
    leadLastUpdated: Date | null;
    snapshot: Record<string, unknown> | null;
    lastChangedFields: string[] | null;
  }> = {},
): Promise<{ id: number; leadId: number }> {
  const leadId = overrides.leadId ?? (await buildLead(db)).leadId;
  const snapshot =
    overrides.snapshot === undefined
      ? { wId: leadId, wCompanyName: `Snapshot ${leadId}` }
      : overrides.snapshot;
  const row = await db
    .insertInto("lead_export_history")
    .values({
      account_id: accountId,
      lead_id: leadId,
      exported_at: overrides.exportedAt ?? new Date(),
      export_method: overrides.exportMethod ?? "api",
      lead_last_updated: overrides.leadLastUpdated ?? null,
      lead_snapshot: snapshot === null ? null : JSON.stringify(snapshot),
      last_changed_fields: overrides.lastChangedFields ?? null,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return { id: row.id, leadId };
}

/** A request of the API as a test describes it. */
export interface EndpointCall {
  method: "get" | "post" | "put" | "delete";
  path: string;
  body?: unknown;
}

/**
 * Checks that each call answers 401 `unauthorized` without a key, with an unknown key and with a
 * revoked key, and 403 `forbidden` for an account without a paid plan.
 */
export async function expectKeyAndPlanRequired(t: TestApp, calls: readonly EndpointCall[]): Promise<void> {
  const revoked = await buildAccount(t.ctx.db);
  await revokeKeyByHash(t.ctx.db, hashApiKey(revoked.apiKey));
  const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
  const cases: { headers: Record<string, string>; status: number; error: string }[] = [
    { headers: {}, status: 401, error: "unauthorized" },
    { headers: { Authorization: `Bearer svck_${"x".repeat(40)}` }, status: 401, error: "unauthorized" },
    { headers: revoked.auth, status: 401, error: "unauthorized" },
    { headers: canceled.auth, status: 403, error: "forbidden" },
  ];
  for (const call of calls) {
    for (const c of cases) {
      let req = t.request()[call.method](call.path).set(c.headers);
      if (call.body !== undefined) req = req.send(call.body as object);
      const res = await req;
      expect(res.status, `${call.method.toUpperCase()} ${call.path}`).toBe(c.status);
      expect(res.body.error).toBe(c.error);
    }
  }
}
