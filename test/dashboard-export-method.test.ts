import { describe, expect, it } from "vitest";
import { useJobRunner, useTestApp } from "./helpers/app.js";
import { tokenOf, useMailRunner, waitForSignInLink, mailsTo } from "./helpers/dashboard-sign-in.js";
import { buildWordLeads } from "./helpers/export-job-factories.js";
import { buildAccount } from "./helpers/factories.js";

// `exportMethod` of searches and exports: `dashboard` from a signed-in session, `api` from a key
// (issue 35; docs/dashboard.md). Answers are checked against openapi.yaml (validateResponses).
const t = useTestApp({ trustProxy: true });
useMailRunner(t);
useJobRunner(t);

let ipSequence = 0;
/** A client IP of its own for one call (the sign-in limits are per IP). */
function fresh(): { "X-Forwarded-For": string } {
  ipSequence += 1;
  return { "X-Forwarded-For": `10.7.${ipSequence >> 8}.${ipSequence & 255}` };
}

/** A new account with a key and a signed-in session (its cookie and CSRF token). */
async function signedIn() {
  const account = await buildAccount(t.ctx.db);
  const { email } = await t.ctx.db
    .selectFrom("accounts")
    .select("email")
    .where("id", "=", account.accountId)
    .executeTakeFirstOrThrow();
  const known = (await mailsTo(t.ctx.config.dataDir, email)).length;
  await t.request().post("/api/v1/auth/sign-in-links").set(fresh()).send({ email }).expect(202);
  const link = await waitForSignInLink(t.ctx.config.dataDir, email, known);
  const res = await t
    .request()
    .post("/api/v1/auth/sessions")
    .set(fresh())
    .send({ token: tokenOf(link) })
    .expect(201);
  const cookie = String(res.headers["set-cookie"]).split(";")[0]!;
  return {
    ...account,
    session: { Cookie: cookie, "X-CSRF-Token": res.body.data.csrfToken as string },
  };
}

/** The account's lead export history: lead id -> exportMethod (read with its key). */
async function methodsByLead(auth: { Authorization: string }): Promise<Map<number, string>> {
  const res = await t.request().get("/api/v1/lead-export-history?limit=200").set(auth).expect(200);
  const entries = res.body.data as { leadId: number; exportMethod: string }[];
  return new Map(entries.map((e) => [e.leadId, e.exportMethod]));
}

/** The account's export history files: id -> exportMethod. */
async function fileMethods(auth: { Authorization: string }): Promise<Map<number, string>> {
  const res = await t.request().get("/api/v1/export-history").set(auth).expect(200);
  const files = res.body.data as { id: number; exportMethod: string }[];
  return new Map(files.map((f) => [f.id, f.exportMethod]));
}

async function creditsOf(auth: { Authorization: string }): Promise<number> {
  const res = await t.request().get("/api/v1/me").set(auth).expect(200);
  return res.body.data.totalCreditsRemaining as number;
}

describe("exportMethod of a paid search", () => {
  it("records dashboard for a session's search and api for a key's", async () => {
    const a = await signedIn();
    const { word, ids } = await buildWordLeads(t.ctx.db, 4);
    const bySession = await t
      .request()
      .get(`/api/v1/leads?positiveKeywords=${word}*&limit=2`)
      .set(a.session)
      .expect(200);
    expect(bySession.body.data.creditsUsed).toBe(2);
    const sessionLeads = (bySession.body.data.leads as { id: number }[]).map((l) => l.id);
    const byKey = await t
      .request()
      .get(`/api/v1/leads?positiveKeywords=${word}*&limit=2&page=2`)
      .set(a.auth)
      .expect(200);
    const keyLeads = (byKey.body.data.leads as { id: number }[]).map((l) => l.id);
    expect([...sessionLeads, ...keyLeads].sort()).toEqual([...ids].sort());

    const methods = await methodsByLead(a.auth);
    for (const id of sessionLeads) expect(methods.get(id)).toBe("dashboard");
    for (const id of keyLeads) expect(methods.get(id)).toBe("api");
    // The history filter sees the channel too.
    const dashboardOnly = await t
      .request()
      .get("/api/v1/lead-export-history?exportMethod=dashboard")
      .set(a.session)
      .expect(200);
    expect((dashboardOnly.body.data as { leadId: number }[]).map((e) => e.leadId).sort()).toEqual(
      [...sessionLeads].sort(),
    );
  });

  it("a later search of the same leads by key moves the entry to api", async () => {
    const a = await signedIn();
    const { word, ids } = await buildWordLeads(t.ctx.db, 2);
    await t.request().get(`/api/v1/leads?positiveKeywords=${word}`).set(a.session).expect(200);
    expect([...(await methodsByLead(a.auth)).values()]).toEqual(["dashboard", "dashboard"]);
    const again = await t.request().get(`/api/v1/leads?positiveKeywords=${word}`).set(a.auth).expect(200);
    expect(again.body.data.creditsUsed).toBe(0);
    const methods = await methodsByLead(a.auth);
    expect(ids.map((id) => methods.get(id))).toEqual(["api", "api"]);
  });
});

describe("exportMethod of an export", () => {
  it("records dashboard for a session's export (entries and file) and api for a key's identical one", async () => {
    const a = await signedIn();
    const { word, ids } = await buildWordLeads(t.ctx.db, 3);
    const body = { filters: { positiveKeywords: [`*${word}*`] }, inline: false };
    const bySession = await t.request().post("/api/v1/leads/export").set(a.session).send(body).expect(200);
    expect(bySession.body.data).toMatchObject({ leadCount: 3, creditsUsed: 3 });
    const sessionFile = bySession.body.data.exportId as number;
    let methods = await methodsByLead(a.auth);
    expect(ids.map((id) => methods.get(id))).toEqual(["dashboard", "dashboard", "dashboard"]);
    expect((await fileMethods(a.auth)).get(sessionFile)).toBe("dashboard");

    // The identical request with the key is a job of its own (it does not join the session's).
    const byKey = await t.request().post("/api/v1/leads/export").set(a.auth).send(body).expect(200);
    expect(byKey.body.data).toMatchObject({ leadCount: 3, creditsUsed: 0 });
    const keyFile = byKey.body.data.exportId as number;
    expect(keyFile).not.toBe(sessionFile);
    methods = await methodsByLead(a.auth);
    expect(ids.map((id) => methods.get(id))).toEqual(["api", "api", "api"]);
    const files = await fileMethods(a.auth);
    expect(files.get(sessionFile)).toBe("dashboard");
    expect(files.get(keyFile)).toBe("api");
  });

  it("refuses a session's export without the CSRF token: nothing exported or charged", async () => {
    const a = await signedIn();
    const { word } = await buildWordLeads(t.ctx.db, 2);
    const before = await creditsOf(a.auth);
    const res = await t
      .request()
      .post("/api/v1/leads/export")
      .set({ Cookie: a.session.Cookie })
      .send({ filters: { positiveKeywords: [word] }, inline: false })
      .expect(403);
    expect(res.body.error).toBe("forbidden");
    expect(await creditsOf(a.auth)).toBe(before);
    expect((await methodsByLead(a.auth)).size).toBe(0);
    expect((await fileMethods(a.auth)).size).toBe(0);
  });

  it("gives a session's bad export input the documented 400, nothing charged", async () => {
    const a = await signedIn();
    const before = await creditsOf(a.auth);
    const res = await t
      .request()
      .post("/api/v1/leads/export")
      .set(a.session)
      .send({ filters: { positiveKeywords: ["x"] }, formatId: 999999999 })
      .expect(400);
    expect(res.body.error).toBe("validation_error");
    expect(await creditsOf(a.auth)).toBe(before);
  });

  it("keeps one account's session away from another account's export files", async () => {
    const a = await signedIn();
    const b = await signedIn();
    const { word } = await buildWordLeads(t.ctx.db, 1);
    const exported = await t
      .request()
      .post("/api/v1/leads/export")
      .set(a.session)
      .send({ filters: { positiveKeywords: [word] }, inline: false })
      .expect(200);
    const id = exported.body.data.exportId as number;
    await t
      .request()
      .get(`/api/v1/export-history/${id}/download`)
      .set({ Cookie: b.session.Cookie })
      .expect(404);
    await t
      .request()
      .get(`/api/v1/export-history/${id}/download-url`)
      .set({ Cookie: b.session.Cookie })
      .expect(404);
    await t
      .request()
      .get(`/api/v1/export-history/${id}/download`)
      .set({ Cookie: a.session.Cookie })
      .expect(200);
  });
});

describe("exportMethod of a lead export history re-export", () => {
  it("records dashboard for a session's file and api for a key's identical request, each its own job", async () => {
    const a = await signedIn();
    const { word } = await buildWordLeads(t.ctx.db, 2);
    await t.request().get(`/api/v1/leads?positiveKeywords=${word}`).set(a.auth).expect(200);
    const entries = await t.request().get("/api/v1/lead-export-history").set(a.auth).expect(200);
    const trackingIds = (entries.body.data as { id: number }[]).map((e) => e.id);
    const body = { trackingIds };
    const before = await creditsOf(a.auth);

    await t.request().post("/api/v1/lead-export-history/re-export").set(a.session).send(body).expect(200);
    let files = [...(await fileMethods(a.auth)).values()];
    expect(files).toEqual(["dashboard"]);
    await t.request().post("/api/v1/lead-export-history/re-export").set(a.auth).send(body).expect(200);
    files = [...(await fileMethods(a.auth)).values()].sort();
    expect(files).toEqual(["api", "dashboard"]);
    await t
      .request()
      .post("/api/v1/lead-export-history/refresh-and-export")
      .set(a.session)
      .send(body)
      .expect(200);
    expect([...(await fileMethods(a.auth)).values()].filter((m) => m === "dashboard")).toHaveLength(2);
    expect(await creditsOf(a.auth)).toBe(before);
  });
});
