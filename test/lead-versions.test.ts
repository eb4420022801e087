import { describe, expect, it } from "vitest";
import { recordDeliveredLeads } from "../src/leads/versions.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLead, uniqueWord } from "./helpers/leads-factories.js";

const t = useTestApp();

type Auth = { Authorization: string };

async function deliver(accountId: number, leadIds: number[]): Promise<void> {
  await t.ctx.db.transaction().execute(async (trx) => {
    await recordDeliveredLeads(trx, { accountId, method: "api", exportedAt: new Date(), leadIds });
  });
}

async function rename(leadId: number, companyName: string): Promise<void> {
  await t.ctx.db.updateTable("leads").set({ company_name: companyName }).where("id", "=", leadId).execute();
}

async function versionOf(leadId: number): Promise<number> {
  const row = await t.ctx.db
    .selectFrom("leads")
    .select("version")
    .where("id", "=", leadId)
    .executeTakeFirstOrThrow();
  return row.version;
}

async function keptVersions(leadId: number): Promise<number[]> {
  const rows = await t.ctx.db
    .selectFrom("lead_versions")
    .select(["version", "company_name"])
    .where("id", "=", leadId)
    .orderBy("version")
    .execute();
  return rows.map((r) => r.version);
}

/** The entry of one lead as GET /lead-export-history gives it. */
async function entryOf(auth: Auth, leadId: number) {
  const res = await t
    .request()
    .get("/api/v1/lead-export-history")
    .query({ limit: 200 })
    .set(auth)
    .expect(200);
  const entries = res.body.data as {
    leadId: number;
    leadSnapshot: Record<string, unknown> | null;
    lead: Record<string, unknown> | null;
  }[];
  return entries.find((e) => e.leadId === leadId);
}

describe("lead versions behind the lead export history", () => {
  it("keeps the delivered data when the lead changes later; a new delivery names the new data", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    const lead = await buildLead(t.ctx.db, { company_name: `${word} Original` });
    await deliver(accountId, [lead]);

    await rename(lead, `${word} Renamed`);
    expect(await versionOf(lead)).toBe(2);
    expect(await keptVersions(lead)).toEqual([1]);
    const entry = await entryOf(auth, lead);
    expect(entry?.leadSnapshot).toMatchObject({ wId: lead, wCompanyName: `${word} Original` });
    expect(entry?.lead).toMatchObject({ wCompanyName: `${word} Original` });

    await deliver(accountId, [lead]);
    expect((await entryOf(auth, lead))?.leadSnapshot).toMatchObject({ wCompanyName: `${word} Renamed` });
  });

  it("keeps nothing for a lead nobody received, and no new version for an update that changes no data", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    const lead = await buildLead(t.ctx.db, { company_name: `${word} A` });
    await rename(lead, `${word} B`);
    expect(await versionOf(lead)).toBe(2);
    expect(await keptVersions(lead)).toEqual([]);

    await deliver(accountId, [lead]);
    await t.ctx.db.updateTable("leads").set({ updated_at: new Date() }).where("id", "=", lead).execute();
    await rename(lead, `${word} B`);
    expect(await versionOf(lead)).toBe(2);
    expect(await keptVersions(lead)).toEqual([]);
  });

  it("a version two accounts received is kept once; each account sees what it received", async () => {
    const one = await buildAccount(t.ctx.db);
    const two = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    const lead = await buildLead(t.ctx.db, { company_name: `${word} First` });
    await deliver(one.accountId, [lead]);
    await deliver(two.accountId, [lead]);
    await rename(lead, `${word} Second`);
    await deliver(two.accountId, [lead]);
    await rename(lead, `${word} Third`);

    expect(await keptVersions(lead)).toEqual([1, 2]);
    expect((await entryOf(one.auth, lead))?.leadSnapshot).toMatchObject({ wCompanyName: `${word} First` });
    expect((await entryOf(two.auth, lead))?.leadSnapshot).toMatchObject({ wCompanyName: `${word} Second` });
  });

  it("an entry with a stored copy shows the copy; one with neither copy nor version shows live data", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    const copied = await buildLead(t.ctx.db, { company_name: `${word} Live 1` });
    const bare = await buildLead(t.ctx.db, { company_name: `${word} Live 2` });
    await t.ctx.db
      .insertInto("lead_export_history")
      .values([
        {
          account_id: accountId,
          lead_id: copied,
          exported_at: new Date(),
          export_method: "dashboard",
          lead_snapshot: JSON.stringify({ wCompanyName: `${word} Copy` }),
        },
        {
          account_id: accountId,
          lead_id: bare,
          exported_at: new Date(),
          export_method: "dashboard",
          lead_snapshot: null,
        },
      ])
      .execute();
    expect((await entryOf(auth, copied))?.leadSnapshot).toEqual({ wCompanyName: `${word} Copy` });
    const entry = await entryOf(auth, bare);
    expect(entry?.leadSnapshot).toBeNull();
    expect(entry?.lead).toMatchObject({ wCompanyName: `${word} Live 2` });
  });

  it("a change during an uncommitted delivery does not wait for it, and keeps the old version", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    const lead = await buildLead(t.ctx.db, { company_name: `${word} Before` });
    const untouched = await buildLead(t.ctx.db, { company_name: `${word} Other` });

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let recorded!: () => void;
    const isRecorded = new Promise<void>((resolve) => (recorded = resolve));
    const delivery = t.ctx.db.transaction().execute(async (trx) => {
      await recordDeliveredLeads(trx, { accountId, method: "api", exportedAt: new Date(), leadIds: [lead] });
      recorded();
      await held;
    });
    await isRecorded;
    // Neither change waits; both keep their old version, as a delivery might name it.
    await rename(lead, `${word} After`);
    await rename(untouched, `${word} Other 2`);
    expect(await keptVersions(lead)).toEqual([1]);
    expect(await keptVersions(untouched)).toEqual([1]);
    release();
    await delivery;

    expect((await entryOf(auth, lead))?.leadSnapshot).toMatchObject({ wCompanyName: `${word} Before` });
    // Without a delivery in flight, a version nobody received is not kept.
    await rename(untouched, `${word} Other 3`);
    expect(await keptVersions(untouched)).toEqual([1]);
  });

  it("a delivery racing an uncommitted change waits for it, then names the new version", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    const lead = await buildLead(t.ctx.db, { company_name: `${word} Before` });

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let updated!: () => void;
    const isUpdated = new Promise<void>((resolve) => (updated = resolve));
    const change = t.ctx.db.transaction().execute(async (trx) => {
      await trx
        .updateTable("leads")
        .set({ company_name: `${word} After` })
        .where("id", "=", lead)
        .execute();
      updated();
      await held;
    });
    await isUpdated;
    let delivered = false;
    const delivery = deliver(accountId, [lead]).then(() => (delivered = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(delivered).toBe(false);
    release();
    await change;
    await delivery;

    expect(await keptVersions(lead)).toEqual([]);
    const entry = await entryOf(auth, lead);
    expect(entry?.leadSnapshot).toMatchObject({ wCompanyName: `${word} After` });
  });
});

describe("lead export history entries outlive their lead, not their account", () => {
  it("keeps a deleted lead's entry with the data delivered", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const word = uniqueWord();
    const lead = await buildLead(t.ctx.db, { company_name: `${word} Gone` });
    await deliver(accountId, [lead]);
    await t.ctx.db.deleteFrom("leads").where("id", "=", lead).execute();

    expect(await keptVersions(lead)).toEqual([1]);
    const entry = await entryOf(auth, lead);
    expect(entry?.leadSnapshot).toMatchObject({ wCompanyName: `${word} Gone` });
  });

  it("removes an account's entries with the account", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const lead = await buildLead(t.ctx.db);
    await deliver(accountId, [lead]);
    await t.ctx.db.deleteFrom("accounts").where("id", "=", accountId).execute();
    const left = await t.ctx.db
      .selectFrom("lead_export_history")
      .select("id")
      .where("account_id", "=", accountId)
      .execute();
    expect(left).toEqual([]);
  });
});
