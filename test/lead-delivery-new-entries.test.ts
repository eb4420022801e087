import { describe, expect, it } from "vitest";
import { recordDeliveredLeads } from "../src/leads/versions.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead } from "./helpers/leads-factories.js";

const t = useTestApp();

/** Records a delivery in its own transaction; returns how many leads were new to the account. */
async function deliver(accountId: number, leadIds: number[], newToAccount: boolean, method = "api") {
  return t.ctx.db
    .transaction()
    .execute((trx) =>
      recordDeliveredLeads(trx, { accountId, method, exportedAt: new Date(), leadIds, newToAccount }),
    );
}

/** The account's entries: lead, method and version, in lead order. */
async function entries(accountId: number) {
  return t.ctx.db
    .selectFrom("lead_export_history")
    .select(["lead_id", "export_method", "lead_version"])
    .where("account_id", "=", accountId)
    .orderBy("lead_id")
    .execute();
}

/**
 * Another delivery of `leadId` to the account, recorded and held uncommitted until `end()`, which
 * commits it or rolls it back.
 */
async function holdDelivery(accountId: number, leadId: number, outcome: "commit" | "rollback") {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let recorded!: () => void;
  const isRecorded = new Promise<void>((resolve) => (recorded = resolve));
  const done = t.ctx.db
    .transaction()
    .execute(async (trx) => {
      await recordDeliveredLeads(trx, {
        accountId,
        method: "api",
        exportedAt: new Date(),
        leadIds: [leadId],
      });
      recorded();
      await held;
      if (outcome === "rollback") throw new Error("rolled back");
    })
    .catch((err: unknown) => {
      if (outcome === "commit") throw err;
    });
  await isRecorded;
  return {
    async end() {
      release();
      await done;
    },
  };
}

describe("recording leads the caller found new to the account (plain insert)", () => {
  it("inserts one entry per lead with its version and counts every lead as new", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const leads = [await buildLead(t.ctx.db), await buildLead(t.ctx.db), await buildLead(t.ctx.db)];
    expect(await deliver(accountId, leads, true)).toBe(3);
    expect(await entries(accountId)).toEqual(
      leads.map((lead_id) => ({ lead_id, export_method: "api", lead_version: 1 })),
    );
  });

  it("an entry that appeared since the caller looked is updated, not doubled, and not counted", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const [a, b, c] = [await buildLead(t.ctx.db), await buildLead(t.ctx.db), await buildLead(t.ctx.db)];
    // Another delivery recorded `b` after the caller's selection read the history.
    expect(await deliver(accountId, [b], false, "email_schedule")).toBe(1);
    const counted = await t.ctx.db.transaction().execute(async (trx) => {
      const n = await recordDeliveredLeads(trx, {
        accountId,
        method: "api",
        exportedAt: new Date(),
        leadIds: [a!, b!, c!],
        newToAccount: true,
      });
      // The transaction goes on after the undone insert.
      const { count } = await trx
        .selectFrom("lead_export_history")
        .select((eb) => eb.fn.countAll<string>().as("count"))
        .where("account_id", "=", accountId)
        .executeTakeFirstOrThrow();
      return { n, count: Number(count) };
    });
    expect(counted).toEqual({ n: 2, count: 3 });
    expect((await entries(accountId)).map((e) => [e.lead_id, e.export_method])).toEqual([
      [a, "api"],
      [b, "api"],
      [c, "api"],
    ]);
  });

  it("waits for a concurrent delivery of the same lead: not new when it commits", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const [a, b] = [await buildLead(t.ctx.db), await buildLead(t.ctx.db)];
    const other = await holdDelivery(accountId, b!, "commit");
    let done = false;
    const mine = deliver(accountId, [a!, b!], true).then((n) => {
      done = true;
      return n;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(done).toBe(false);
    await other.end();
    expect(await mine).toBe(1);
    expect((await entries(accountId)).map((e) => e.lead_id)).toEqual([a, b]);
  });

  it("waits for a concurrent delivery of the same lead: new when it rolls back", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const [a, b] = [await buildLead(t.ctx.db), await buildLead(t.ctx.db)];
    const other = await holdDelivery(accountId, b!, "rollback");
    const mine = deliver(accountId, [a!, b!], true);
    await new Promise((r) => setTimeout(r, 300));
    await other.end();
    expect(await mine).toBe(2);
    expect((await entries(accountId)).map((e) => e.lead_id)).toEqual([a, b]);
  });
});
