import type { Runner } from "graphile-worker";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importLeadRecords } from "../src/leads/import/importer.js";
import { sendQueuedLiveUpdates } from "../src/leads/import/live-updates.js";
import { validateLeadRecord, type LeadImportRow } from "../src/leads/import/record.js";
import { upsertLeadRows } from "../src/leads/import/repository.js";
import { useTestApp } from "./helpers/app.js";
import { startDeliveryRunner } from "./helpers/delivery-runner.js";
import { buildAccount } from "./helpers/factories.js";
import { markReceived, uniqueWord } from "./helpers/leads-factories.js";
import {
  createWebhook as createWebhookAt,
  expectContractEvent,
  startReceiver,
  verifyDelivery,
} from "./helpers/webhook-receiver.js";

const t = useTestApp();
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let runner: Runner;

beforeAll(async () => {
  receiver = await startReceiver();
  runner = await startDeliveryRunner(t.ctx);
});
afterAll(async () => {
  await runner?.stop();
  await receiver?.close();
});

type Auth = { Authorization: string };

/** A lead with every field the buying signal looks at. */
function baseRecord(id: string) {
  return {
    id,
    companyName: "Lone Star Plumbing",
    registeredUrl: `https://${id}.example`,
    phone: "(512) 555-0142",
    email: "info@lonestar.example",
    emailTier1: "t1@lonestar.example",
    emailTier2: "t2@lonestar.example",
    emailTier3: "t3@lonestar.example",
    address: "1200 Congress Ave",
    city: "Austin",
    state: "TX",
    zip: "78701",
    description: "Plumbing.",
    lastUpdated: "2026-01-01T00:00:00Z",
    socialProfiles: { facebook: "https://facebook.com/lonestar" },
  };
}

type LeadRow = {
  id: number;
  last_buying_signal: Date | null;
  buying_signal_type: string[];
  version: number;
  phone: string | null;
};

async function leadByExternalId(externalId: string): Promise<LeadRow> {
  const { rows } = await sql<LeadRow>`
    select id, last_buying_signal, buying_signal_type, version, phone from leads
    where external_id = ${externalId}`.execute(t.ctx.db);
  if (!rows[0]) throw new Error(`no lead ${externalId}`);
  return rows[0];
}

const OLD_SIGNAL = new Date("2020-01-01T00:00:00Z");

/** Imports `base`, sets an old signal, imports `next`; answers the lead's signal afterwards. */
async function signalAfter(
  base: Record<string, unknown>,
  next: Record<string, unknown>,
): Promise<{ at: Date | null; types: string[] }> {
  await importLeadRecords(t.ctx.db, [base]);
  await sql`update leads set last_buying_signal = ${OLD_SIGNAL}, buying_signal_type = array['Old']
    where external_id = ${base.id as string}`.execute(t.ctx.db);
  const result = await importLeadRecords(t.ctx.db, [next]);
  expect(result).toMatchObject({ imported: 0, updated: 1, rejected: 0 });
  const lead = await leadByExternalId(base.id as string);
  return { at: lead.last_buying_signal, types: lead.buying_signal_type };
}

describe("buying signal of imported leads", () => {
  it("marks a new lead `Newly Added` at the import time; a record's own signal is kept", async () => {
    const before = Date.now() - 1000;
    const id = uniqueWord("bs");
    await importLeadRecords(t.ctx.db, [{ id, companyName: "New" }]);
    const lead = await leadByExternalId(id);
    expect(lead.buying_signal_type).toEqual(["Newly Added"]);
    expect(lead.last_buying_signal!.getTime()).toBeGreaterThan(before);

    const own = uniqueWord("bs");
    await importLeadRecords(t.ctx.db, [
      { id: own, lastBuyingSignal: "2026-03-01T00:00:00Z", buyingSignalType: ["hiring"] },
    ]);
    expect(await leadByExternalId(own)).toMatchObject({
      last_buying_signal: new Date("2026-03-01T00:00:00Z"),
      buying_signal_type: ["hiring"],
    });
  });

  const moves: [string, (r: ReturnType<typeof baseRecord>) => Record<string, unknown>, string[]][] = [
    ["a new primary phone", (r) => ({ ...r, phone: "(512) 555-0199" }), ["Primary Phone"]],
    ["a second phone (total phones)", (r) => ({ ...r, phoneSecondary: "(512) 555-0100" }), ["Total Phones"]],
    ["a new primary e-mail", (r) => ({ ...r, email: "owner@lonestar.example" }), ["Primary Email"]],
    ["a new tier 1 e-mail", (r) => ({ ...r, emailTier1: "new1@lonestar.example" }), ["Tier 1 Email"]],
    ["a new tier 2 e-mail", (r) => ({ ...r, emailTier2: "new2@lonestar.example" }), ["Tier 2 Email"]],
    ["a new street", (r) => ({ ...r, address: "1 Main St" }), ["Full Address"]],
    ["a new city", (r) => ({ ...r, city: "Round Rock" }), ["Full Address"]],
    ["a new state", (r) => ({ ...r, state: "CA" }), ["Full Address"]],
    ["a new zip", (r) => ({ ...r, zip: "78702" }), ["Full Address"]],
    [
      "an added Instagram profile",
      (r) => ({ ...r, socialProfiles: { ...r.socialProfiles, instagram: "https://instagram.com/ls" } }),
      ["Instagram"],
    ],
    [
      "a changed Facebook profile",
      (r) => ({ ...r, socialProfiles: { facebook: "https://facebook.com/lonestar2" } }),
      ["Facebook"],
    ],
    [
      "one type per source, in order, other networks as one `Other Social`",
      (r) => ({
        ...r,
        socialProfiles: {
          ...r.socialProfiles,
          mastodon: "https://mastodon.social/@ls",
          pinterest: "https://pinterest.com/ls",
          yelp: "https://yelp.com/biz/ls",
          google_maps: "https://maps.google.com/?cid=1",
          twitter: "https://x.com/ls",
          tiktok: "https://tiktok.com/@ls",
          youtube: "https://youtube.com/@ls",
          linkedin: "https://linkedin.com/company/ls",
          instagram: "https://instagram.com/ls",
          myspace: "https://myspace.com/ls",
        },
      }),
      [
        "Instagram",
        "LinkedIn",
        "YouTube",
        "TikTok",
        "X (Twitter)",
        "Google Maps",
        "Yelp",
        "Pinterest",
        "Other Social",
      ],
    ],
    [
      "several fields at once: only the latest change's reasons",
      (r) => ({ ...r, phone: "(512) 555-0111", email: "x@lonestar.example", zip: "78705" }),
      ["Primary Phone", "Primary Email", "Full Address"],
    ],
  ];
  for (const [name, change, reasons] of moves) {
    it(`moves on ${name}`, async () => {
      const before = Date.now() - 1000;
      const base = baseRecord(uniqueWord("bs"));
      const signal = await signalAfter(base, change(base));
      expect(signal.types).toEqual(reasons);
      expect(signal.at!.getTime()).toBeGreaterThan(before);
    });
  }

  const stays: [string, (r: ReturnType<typeof baseRecord>) => Record<string, unknown>][] = [
    ["nothing changed", (r) => r],
    ["a removed phone", (r) => ({ ...r, phone: undefined })],
    ["the same phone written differently", (r) => ({ ...r, phone: "512-555-0142" })],
    ["the same e-mail in another case", (r) => ({ ...r, email: "INFO@lonestar.example" })],
    ["a removed e-mail", (r) => ({ ...r, email: undefined, emailTier1: undefined })],
    ["a removed address part", (r) => ({ ...r, address: undefined, zip: undefined })],
    ["a removed social profile", (r) => ({ ...r, socialProfiles: {} })],
    ["a changed tier 3 e-mail", (r) => ({ ...r, emailTier3: "new3@lonestar.example" })],
    ["other fields", (r) => ({ ...r, companyName: "Renamed", description: "New text.", stars: 5 })],
    ["a signal in the record of an existing lead", (r) => ({ ...r, buyingSignalType: ["hiring"] })],
  ];
  for (const [name, change] of stays) {
    it(`does not move on ${name}`, async () => {
      const base = baseRecord(uniqueWord("bs"));
      expect(await signalAfter(base, change(base))).toEqual({ at: OLD_SIGNAL, types: ["Old"] });
    });
  }
});

describe("live updates of an import", () => {
  const createWebhook = (auth: Auth, events: string[]) => createWebhookAt(t, receiver, auth, events);

  /** Waits until no outbox row and no pending delivery of the integrations is left. */
  async function settled(integrationIds: number[]): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await sql<{ n: number }>`
        select (select count(*) from event_outbox)::int
          + (select count(*) from integration_deliveries
             where integration_id = any(${integrationIds}) and status not in ('success', 'failed'))::int as n`.execute(
        t.ctx.db,
      );
      if (rows[0]?.n === 0) return;
      if (Date.now() > deadline) throw new Error("events not delivered");
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function deliveriesOf(integrationId: number) {
    return t.ctx.db
      .selectFrom("integration_deliveries")
      .select(["event_type", "status"])
      .where("integration_id", "=", integrationId)
      .execute();
  }

  it("sends exactly one lead.updated per changed lead to accounts holding it, not for blacklisted leads", async () => {
    const [x, y, z] = [uniqueWord("lx"), uniqueWord("ly"), uniqueWord("lz")];
    await importLeadRecords(t.ctx.db, [baseRecord(x), baseRecord(y), baseRecord(z)]);
    const [lx, ly, lz] = [await leadByExternalId(x), await leadByExternalId(y), await leadByExternalId(z)];

    const holder = await buildAccount(t.ctx.db);
    const unsubscribed = await buildAccount(t.ctx.db);
    const blacklisting = await buildAccount(t.ctx.db);
    const stranger = await buildAccount(t.ctx.db);
    await markReceived(t.ctx.db, holder.accountId, [lx.id, ly.id], "api");
    await markReceived(t.ctx.db, unsubscribed.accountId, [lx.id]);
    await markReceived(t.ctx.db, blacklisting.accountId, [lx.id, ly.id]);
    await t
      .request()
      .post("/api/v1/export-blacklist")
      .set(blacklisting.auth)
      .send({ entries: [{ entryType: "domain", value: `${x}.example` }] })
      .expect(201);
    const hook = await createWebhook(holder.auth, ["lead.updated"]);
    const createdOnly = await createWebhook(holder.auth, ["lead.created"]);
    const blHook = await createWebhook(blacklisting.auth, ["lead.updated"]);
    const strangerHook = await createWebhook(stranger.auth, ["lead.updated"]);
    await createWebhook(unsubscribed.auth, ["export.completed"]);

    // x gets a new phone, y only a new description (still a change of its data), z (held by
    // nobody) a new e-mail.
    await importLeadRecords(t.ctx.db, [
      { ...baseRecord(x), phone: "(512) 555-0177" },
      { ...baseRecord(y), description: "Now also drains." },
      { ...baseRecord(z), email: "new@z.example" },
    ]);

    const got = await receiver.waitForAt(hook.path, 2);
    await settled([hook.id, blHook.id, strangerHook.id, createdOnly.id]);
    expect(receiver.at(hook.path)).toHaveLength(2);
    for (const delivery of got) {
      verifyDelivery(delivery, hook.secret);
      expectContractEvent(delivery.event);
      expect(delivery.event).toMatchObject({ type: "lead.updated", userId: holder.accountId });
    }
    const byId = new Map(got.map((d) => [(d.event.data as { id: number }).id, d.event]));
    expect(byId.get(lx.id)).toMatchObject({
      data: { id: lx.id, source: "api", phone: "(512) 555-0177", buyingSignalType: ["Primary Phone"] },
    });
    expect(byId.get(ly.id)).toMatchObject({ data: { id: ly.id, description: "Now also drains." } });

    // The blacklisting account hears of y only; nobody else hears anything.
    const bl = await receiver.waitForAt(blHook.path, 1);
    expect(bl.map((d) => (d.event.data as { id: number }).id)).toEqual([ly.id]);
    expect(await deliveriesOf(strangerHook.id)).toEqual([]);
    expect(receiver.received.filter((d) => (d.event.data as { id?: number }).id === lz.id)).toEqual([]);
    expect(await deliveriesOf(createdOnly.id)).toEqual([]);

    // The same data again changes nothing and sends nothing.
    await importLeadRecords(t.ctx.db, [
      { ...baseRecord(x), phone: "(512) 555-0177" },
      { ...baseRecord(y), description: "Now also drains." },
    ]);
    await settled([hook.id, blHook.id]);
    expect(await deliveriesOf(hook.id)).toHaveLength(2);
    expect(await deliveriesOf(blHook.id)).toHaveLength(1);
    // Live updates leave the history as it was: the snapshot is still the delivered data.
    const entries = await t.ctx.db
      .selectFrom("lead_export_history")
      .select(["lead_version", "last_changed_fields"])
      .where("account_id", "=", holder.accountId)
      .execute();
    expect(entries).toEqual([
      { lead_version: null, last_changed_fields: null },
      { lead_version: null, last_changed_fields: null },
    ]);
  });

  it("sends nothing for an account that already has the changed version", async () => {
    const x = uniqueWord("lx");
    await importLeadRecords(t.ctx.db, [baseRecord(x)]);
    const account = await buildAccount(t.ctx.db);
    const hook = await createWebhook(account.auth, ["lead.updated"]);
    await importLeadRecords(t.ctx.db, [{ ...baseRecord(x), city: "Dallas" }]);
    const lead = await leadByExternalId(x);
    // Received after the change (at its version): nothing is newer than what the account has.
    await sql`insert into lead_export_history (account_id, lead_id, exported_at, export_method, lead_version)
      values (${account.accountId}, ${lead.id}, now(), 'api', ${lead.version})`.execute(t.ctx.db);
    const { queueLiveUpdates } = await import("../src/leads/import/live-updates-queue.js");
    await queueLiveUpdates(t.ctx.db, { ids: [lead.id], versions: [lead.version] });
    expect(await sendQueuedLiveUpdates(t.ctx.db)).toBe(0);
    await settled([hook.id]);
    expect(await deliveriesOf(hook.id)).toEqual([]);
  });

  /** The validated row of a record, as the importer writes it. */
  function rowOf(record: Record<string, unknown>): LeadImportRow {
    const checked = validateLeadRecord(record, "json");
    if (!checked.ok) throw new Error(checked.problems.join("; "));
    return checked.row;
  }

  const queued = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from lead_live_updates`.execute(t.ctx.db)).rows[0]?.n;

  it("keeps the changes of a batch whose import died before sending them; the sweep sends each once", async () => {
    const [x, y] = [uniqueWord("lx"), uniqueWord("ly")];
    await importLeadRecords(t.ctx.db, [baseRecord(x), baseRecord(y)]);
    const [lx, ly] = [await leadByExternalId(x), await leadByExternalId(y)];
    const holder = await buildAccount(t.ctx.db);
    await markReceived(t.ctx.db, holder.accountId, [lx.id, ly.id], "api");
    const hook = await createWebhook(holder.auth, ["lead.updated"]);
    expect(await queued()).toBe(0);

    // Two batches committed (x changed twice), then the importing process died: nothing sent yet.
    await upsertLeadRows(t.ctx.db, [rowOf({ ...baseRecord(x), city: "Dallas" }), rowOf(baseRecord(y))]);
    await upsertLeadRows(t.ctx.db, [rowOf({ ...baseRecord(x), city: "Houston" })]);
    expect(await queued()).toBe(2);
    await settled([hook.id]);
    expect(await deliveriesOf(hook.id)).toEqual([]);

    // The sweep leaves batches younger than its grace period to their import...
    expect(await sendQueuedLiveUpdates(t.ctx.db, { queuedBefore: new Date(Date.now() - 60_000) })).toBe(0);
    expect(await queued()).toBe(2);
    // ... and sends older ones: x once, at its newest data; y (unchanged) not at all.
    expect(await sendQueuedLiveUpdates(t.ctx.db, { queuedBefore: new Date(Date.now() + 1_000) })).toBe(1);
    expect(await queued()).toBe(0);
    const [got] = await receiver.waitForAt(hook.path, 1);
    verifyDelivery(got!, hook.secret);
    expect(got!.event).toMatchObject({ type: "lead.updated", data: { id: lx.id, city: "Houston" } });
    expect(await sendQueuedLiveUpdates(t.ctx.db)).toBe(0);
    await settled([hook.id]);
    expect(await deliveriesOf(hook.id)).toEqual([{ event_type: "lead.updated", status: "success" }]);
  });

  it("queues nothing for a batch that rolled back", async () => {
    const x = uniqueWord("lx");
    await importLeadRecords(t.ctx.db, [baseRecord(x)]);
    const lead = await leadByExternalId(x);
    await expect(
      t.ctx.db.transaction().execute(async (trx) => {
        await upsertLeadRows(trx, [rowOf({ ...baseRecord(x), city: "Dallas" })]);
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await queued()).toBe(0);
    expect((await leadByExternalId(x)).version).toBe(lead.version);
  });

  it("sends each queued change once when several senders drain at the same time", async () => {
    const ids = Array.from({ length: 30 }, () => uniqueWord("lc"));
    await importLeadRecords(t.ctx.db, ids.map(baseRecord));
    const leads = await Promise.all(ids.map(leadByExternalId));
    const holder = await buildAccount(t.ctx.db);
    await markReceived(
      t.ctx.db,
      holder.accountId,
      leads.map((l) => l.id),
      "api",
    );
    const hook = await createWebhook(holder.auth, ["lead.updated"]);
    for (const id of ids) await upsertLeadRows(t.ctx.db, [rowOf({ ...baseRecord(id), zip: "78705" })]);
    expect(await queued()).toBe(30);
    const sent = await Promise.all([1, 2, 3].map(() => sendQueuedLiveUpdates(t.ctx.db)));
    expect(sent.reduce((a, b) => a + b, 0)).toBe(30);
    await receiver.waitForAt(hook.path, 30);
    await settled([hook.id]);
    const delivered = receiver.at(hook.path).map((d) => (d.event.data as { id: number }).id);
    expect(delivered.sort((a, b) => a - b)).toEqual(leads.map((l) => l.id).sort((a, b) => a - b));
  });
});
