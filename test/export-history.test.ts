import { parse } from "csv-parse/sync";
import ExcelJS from "exceljs";
import { describe, expect, it } from "vitest";
import { toFileFormat } from "../src/export-formats/format.js";
import { deleteExpiredExportFiles } from "../src/export-history/service.js";
import { signFileToken } from "../src/export-history/signed-links.js";
import { exportFilesCleanup } from "../src/export-history/tasks/export_files__cleanup.js";
import { defaultFileFormat, DEFAULT_COLUMNS } from "../src/export-files/format.js";
import { useTestApp } from "./helpers/app.js";
import { binary, buildExport, buildFormat, readZip, sampleLeads } from "./helpers/export-factories.js";
import { buildAccount, buildKey } from "./helpers/factories.js";

const t = useTestApp({ publicBaseUrl: "https://leads.example.test" });
const DAY_MS = 86_400_000;

const deps = () => ({ db: t.ctx.db, storage: t.ctx.storage });

/** The path part of a signed link (the test app serves it locally). */
const pathOf = (url: string) => new URL(url).pathname;

async function moveInTime(id: number, createdAt: Date, expiresAt: Date) {
  await t.ctx.db
    .updateTable("export_history")
    .set({ created_at: createdAt, expires_at: expiresAt })
    .where("id", "=", id)
    .execute();
}

describe("recording an export", () => {
  it("writes one entry per file with every field, parts then _total", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const format = await buildFormat(t.ctx.db, accountId, {
      name: "Split",
      splitFiles: true,
      splitMode: "max_rows",
      maxRowsPerFile: 10,
      includeTotal: true,
    });
    const date = new Date("2026-11-22T09:30:00Z");
    const { entries, answer } = await buildExport(deps(), accountId, sampleLeads(23), {
      format: toFileFormat(format),
      method: "email_schedule",
      date,
    });
    expect(entries.map((e) => [e.fileName, e.leadCount, e.partNumber, e.isTotal])).toEqual([
      ["leads-main-2026-11-22_part1.csv", 10, 1, false],
      ["leads-main-2026-11-22_part2.csv", 10, 2, false],
      ["leads-main-2026-11-22_part3.csv", 3, 3, false],
      ["leads-main-2026-11-22_total.csv", 23, null, true],
    ]);
    expect(answer).toMatchObject({ fileName: "leads-main-2026-11-22.zip", contentType: "application/zip" });

    const res = await t.request().get("/api/v1/export-history").set(auth).expect(200);
    expect(res.body).toMatchObject({ totalCount: 4, limit: 50, offset: 0 });
    const total = res.body.data.find((e: { isTotal: boolean }) => e.isTotal);
    expect(total).toEqual({
      id: entries[3]!.id,
      fileName: "leads-main-2026-11-22_total.csv",
      fileType: "csv",
      leadCount: 23,
      fileSize: expect.any(Number),
      formatName: "Split",
      databaseType: "other",
      exportMethod: "email_schedule",
      partNumber: null,
      isTotal: true,
      filters: null,
      createdAt: date.toISOString(),
      expiresAt: new Date(date.getTime() + 90 * DAY_MS).toISOString(),
      downloadAvailable: true,
      unavailableReason: null,
    });
    expect(total.fileSize).toBeGreaterThan(100);
    expect(res.headers["x-ratelimit-limit"]).toBe("600");
  });
});

describe("GET /export-history", () => {
  it("pages newest first and keeps expired files listed", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const first = await buildExport(deps(), accountId, sampleLeads(1), {
      date: new Date("2026-11-20T00:00:00Z"),
    });
    const second = await buildExport(deps(), accountId, sampleLeads(2), {
      date: new Date("2026-11-21T00:00:00Z"),
    });
    const third = await buildExport(deps(), accountId, sampleLeads(3), {
      date: new Date("2026-11-22T00:00:00Z"),
    });
    await buildExport(deps(), other.accountId, sampleLeads(1));
    const old = first.entries[0]!;
    await moveInTime(old.id, new Date(Date.now() - 91 * DAY_MS), new Date(Date.now() - DAY_MS));

    const all = await t.request().get("/api/v1/export-history").set(auth).expect(200);
    expect(all.body.totalCount).toBe(3);
    expect(all.body.data.map((e: { id: number }) => e.id)).toEqual([
      third.entries[0]!.id,
      second.entries[0]!.id,
      old.id,
    ]);
    expect(all.body.data[2]).toMatchObject({
      downloadAvailable: false,
      unavailableReason: "expired",
      formatName: null,
    });

    const page = await t.request().get("/api/v1/export-history?limit=1&offset=1").set(auth).expect(200);
    expect(page.body).toMatchObject({ totalCount: 3, limit: 1, offset: 1 });
    expect(page.body.data.map((e: { id: number }) => e.id)).toEqual([second.entries[0]!.id]);
  });

  it("reports a file gone from storage as missing", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const { entries } = await buildExport(deps(), accountId, sampleLeads(1));
    await t.ctx.storage.delete(entries[0]!.storageKey);
    const res = await t.request().get("/api/v1/export-history").set(auth).expect(200);
    expect(res.body.data[0]).toMatchObject({ downloadAvailable: false, unavailableReason: "missing" });
    const download = await t
      .request()
      .get(`/api/v1/export-history/${entries[0]!.id}/download`)
      .set(auth)
      .expect(410);
    expect(download.body).toMatchObject({ error: "file_unavailable", reason: "not_stored" });
    const link = await t
      .request()
      .get(`/api/v1/export-history/${entries[0]!.id}/download-url`)
      .set(auth)
      .expect(410);
    expect(link.body).toMatchObject({ error: "file_unavailable", reason: "not_stored" });
  });

  it.each(["limit=-1", "limit=201", "offset=-1", "limit=abc", "other=1"])(
    "rejects %s with 400",
    async (query) => {
      const { auth } = await buildAccount(t.ctx.db);
      const res = await t.request().get(`/api/v1/export-history?${query}`).set(auth).expect(400);
      expect(res.body.error).toBe("validation_error");
    },
  );

  it("needs a valid key and a paid plan", async () => {
    await t.request().get("/api/v1/export-history").expect(401);
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    await t.request().get("/api/v1/export-history").set(canceled.auth).expect(403);
  });
});

describe("GET /export-history/{id}/download", () => {
  it("streams CSV, JSON and XLSX files with their type and name, to any key of the account", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const second = await buildKey(t.ctx.db, accountId);
    const leads = sampleLeads(3);
    const date = new Date("2026-11-22T12:00:00Z");
    const csv = await buildExport(deps(), accountId, leads, { date });
    const res = await t
      .request()
      .get(`/api/v1/export-history/${csv.entries[0]!.id}/download`)
      .set(second.auth)
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(res.headers["content-type"]).toMatch(/^text\/csv/);
    expect(res.headers["content-disposition"]).toBe('attachment; filename="leads-main-2026-11-22.csv"');
    expect(Number(res.headers["content-length"])).toBe(csv.entries[0]!.fileSize);
    const rows = parse(res.body as Buffer) as string[][];
    expect(rows[0]).toEqual([...DEFAULT_COLUMNS]);
    expect(rows.slice(1).map((r) => r[1])).toEqual(leads.map((l) => l.companyName));

    const json = await buildExport(deps(), accountId, leads, { date, format: defaultFileFormat("json") });
    const jsonRes = await t
      .request()
      .get(`/api/v1/export-history/${json.entries[0]!.id}/download`)
      .set(auth)
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(jsonRes.headers["content-type"]).toMatch(/^application\/json/);
    const objects = JSON.parse((jsonRes.body as Buffer).toString());
    expect(objects).toHaveLength(3);
    expect(objects[0]).toMatchObject({
      id: leads[0]!.id,
      companyName: leads[0]!.companyName,
      buyingSignalType: ["new_website"],
    });

    const xlsx = await buildExport(deps(), accountId, leads, { date, format: defaultFileFormat("xlsx") });
    const xlsxRes = await t
      .request()
      .get(`/api/v1/export-history/${xlsx.entries[0]!.id}/download`)
      .set(auth)
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(xlsxRes.headers["content-type"]).toBe(
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    );
    expect(xlsxRes.headers["content-disposition"]).toBe('attachment; filename="leads-main-2026-11-22.xlsx"');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsxRes.body as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0]!;
    expect(sheet.rowCount).toBe(4);
    expect(sheet.getRow(2).getCell(2).value).toBe(leads[0]!.companyName);
  });

  it("serves every file of a split export, whose ZIP answer holds them all", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const format = {
      ...defaultFileFormat(),
      splitFiles: true,
      splitMode: "equal_parts" as const,
      numberOfParts: 2,
      includeTotal: true,
    };
    const { entries, answer } = await buildExport(deps(), accountId, sampleLeads(5), { format });
    expect(answer).toMatchObject({ contentType: "application/zip", temporary: true });
    const opened = (await t.ctx.storage.open(answer.storageKey))!;
    const zipBytes = Buffer.concat(await opened.body.toArray());
    expect(zipBytes.length).toBe(opened.size);
    const members = readZip(zipBytes);
    for (const entry of entries) {
      const res = await t
        .request()
        .get(`/api/v1/export-history/${entry.id}/download`)
        .set(auth)
        .buffer(true)
        .parse(binary)
        .expect(200);
      expect(res.body).toEqual(members.get(entry.fileName));
      expect((parse(res.body as Buffer) as string[][]).length - 1).toBe(entry.leadCount);
    }
  });

  it("answers 410 file_unavailable once expired, 404 for another account or an unknown id", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const { entries } = await buildExport(deps(), accountId, sampleLeads(1));
    const id = entries[0]!.id;
    const notYours = await t
      .request()
      .get(`/api/v1/export-history/${id}/download`)
      .set(other.auth)
      .expect(404);
    expect(notYours.body.error).toBe("not_found");
    await t.request().get(`/api/v1/export-history/999999/download`).set(auth).expect(404);
    await moveInTime(id, new Date(Date.now() - 90 * DAY_MS - 1000), new Date(Date.now() - 1000));
    const gone = await t.request().get(`/api/v1/export-history/${id}/download`).set(auth).expect(410);
    expect(gone.body).toMatchObject({ error: "file_unavailable", reason: "expired" });
    await t.request().get(`/api/v1/export-history/${id}/download`).expect(401);
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    await t.request().get(`/api/v1/export-history/${id}/download`).set(canceled.auth).expect(403);
  });
});

describe("signed links", () => {
  it("issues a 15-minute link under PUBLIC_BASE_URL that works without Authorization", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const { entries } = await buildExport(deps(), accountId, sampleLeads(2), {
      date: new Date("2026-11-22T00:00:00Z"),
    });
    const before = Date.now();
    const res = await t
      .request()
      .get(`/api/v1/export-history/${entries[0]!.id}/download-url`)
      .set(auth)
      .expect(200);
    const after = Date.now();
    const { url, expiresAt } = res.body.data as { url: string; expiresAt: string };
    expect(url).toMatch(/^https:\/\/leads\.example\.test\/api\/v1\/files\/[\w.-]+$/);
    expect(res.body.data).toMatchObject({
      downloadUrl: url,
      expiresInSeconds: 900,
      fileName: "leads-main-2026-11-22.csv",
      fileType: "csv",
      fileSize: entries[0]!.fileSize,
      leadCount: 2,
      fileExpiresAt: entries[0]!.expiresAt.toISOString(),
    });
    // 15 minutes from when the service answered (between before and after), in whole seconds.
    expect(Date.parse(expiresAt) - before).toBeGreaterThan(14 * 60_000);
    expect(Date.parse(expiresAt) - after).toBeLessThanOrEqual(15 * 60_000);

    const file = await t.request().get(pathOf(url)).buffer(true).parse(binary).expect(200);
    expect(file.headers["content-type"]).toMatch(/^text\/csv/);
    expect(file.headers["content-disposition"]).toBe('attachment; filename="leads-main-2026-11-22.csv"');
    expect(file.headers["x-ratelimit-limit"]).toBeUndefined();
    expect((parse(file.body as Buffer) as string[][]).length).toBe(3);
  });

  it("answers 410 once the link has expired and 404 for a forged or malformed token", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const { entries } = await buildExport(deps(), accountId, sampleLeads(1));
    const entry = entries[0]!;
    const expired = signFileToken(t.ctx.signingSecret, {
      entryId: entry.id,
      accountId,
      expiresAt: new Date(Date.now() - 1000),
    });
    const late = await t.request().get(`/api/v1/files/${expired}`).expect(410);
    expect(late.body).toMatchObject({ error: "file_unavailable", reason: "link_expired" });

    const valid = await t
      .request()
      .get(`/api/v1/export-history/${entry.id}/download-url`)
      .set(auth)
      .expect(200);
    const token = pathOf(valid.body.data.url).split("/").pop()!;
    const [id, account, exp, sig] = token.split(".") as [string, string, string, string];
    const otherAccount = await buildAccount(t.ctx.db);
    const forged = [
      `${id}.${otherAccount.accountId}.${exp}.${sig}`,
      `${id}.${account}.${Number(exp) + 3600}.${sig}`,
      `${id}.${account}.${exp}.${sig.slice(0, -2)}AA`,
      `${id}.${account}.${exp}`,
      "nonsense",
      signFileToken("another-secret", {
        entryId: entry.id,
        accountId,
        expiresAt: new Date(Date.now() + 60_000),
      }),
    ];
    for (const bad of forged) {
      const res = await t.request().get(`/api/v1/files/${bad}`).expect(404);
      expect(res.body.error).toBe("not_found");
    }
    await t.request().get(`/api/v1/files/${token}`).expect(200);
  });

  it("a link stops at the file's expiry: 410 for the file, and no link for an expired file", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const { entries } = await buildExport(deps(), accountId, sampleLeads(1));
    const id = entries[0]!.id;
    // Expires in 5 minutes: the link is capped there.
    await moveInTime(id, new Date(Date.now() - 90 * DAY_MS + 5 * 60_000), new Date(Date.now() + 5 * 60_000));
    const link = await t.request().get(`/api/v1/export-history/${id}/download-url`).set(auth).expect(200);
    expect(Date.parse(link.body.data.expiresAt)).toBeLessThanOrEqual(Date.now() + 5 * 60_000);
    expect(link.body.data.expiresInSeconds).toBeLessThanOrEqual(300);
    expect(link.body.data.expiresInSeconds).toBeGreaterThan(290);
    await t.request().get(pathOf(link.body.data.url)).expect(200);
    // The file expires while the link would still be valid.
    await moveInTime(id, new Date(Date.now() - 90 * DAY_MS), new Date(Date.now() - 1000));
    const future = signFileToken(t.ctx.signingSecret, {
      entryId: id,
      accountId,
      expiresAt: new Date(Date.now() + 600_000),
    });
    const gone = await t.request().get(`/api/v1/files/${future}`).expect(410);
    expect(gone.body).toMatchObject({ error: "file_unavailable", reason: "expired" });
    const noLink = await t.request().get(`/api/v1/export-history/${id}/download-url`).set(auth).expect(410);
    expect(noLink.body).toMatchObject({ error: "file_unavailable", reason: "expired" });
  });

  it("download-url answers 404 for another account's entry, 401 and 403", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const { entries } = await buildExport(deps(), accountId, sampleLeads(1));
    await t
      .request()
      .get(`/api/v1/export-history/${entries[0]!.id}/download-url`)
      .set(other.auth)
      .expect(404);
    await t.request().get(`/api/v1/export-history/${entries[0]!.id}/download-url`).expect(401);
    const canceled = await buildAccount(t.ctx.db, { status: "canceled" });
    await t
      .request()
      .get(`/api/v1/export-history/${entries[0]!.id}/download-url`)
      .set(canceled.auth)
      .expect(403);
  });
});

describe("cleanup of expired files", () => {
  it("removes an expired split export's files and its ZIP answer", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const format = {
      ...defaultFileFormat(),
      splitFiles: true,
      splitMode: "equal_parts" as const,
      numberOfParts: 2,
    };
    const { entries, answer } = await buildExport(deps(), accountId, sampleLeads(4), { format });
    expect(await t.ctx.storage.size(answer.storageKey)).toBeGreaterThan(0);
    for (const entry of entries) {
      await moveInTime(entry.id, new Date(Date.now() - 91 * DAY_MS), new Date(Date.now() - DAY_MS));
    }
    await deleteExpiredExportFiles(t.ctx.db, t.ctx.storage);
    expect(await t.ctx.storage.size(answer.storageKey)).toBeUndefined();
    for (const entry of entries) expect(await t.ctx.storage.size(entry.storageKey)).toBeUndefined();
  });

  it("removes the bytes of expired files only; their entries stay listed as expired", async () => {
    const { accountId, auth } = await buildAccount(t.ctx.db);
    const old = await buildExport(deps(), accountId, sampleLeads(1));
    const fresh = await buildExport(deps(), accountId, sampleLeads(1));
    const oldEntry = old.entries[0]!;
    await moveInTime(oldEntry.id, new Date(Date.now() - 91 * DAY_MS), new Date(Date.now() - DAY_MS));
    const removed = await deleteExpiredExportFiles(t.ctx.db, t.ctx.storage);
    expect(removed).toBeGreaterThanOrEqual(1);
    expect(await t.ctx.storage.size(oldEntry.storageKey)).toBeUndefined();
    expect(await t.ctx.storage.size(fresh.entries[0]!.storageKey)).toBeGreaterThan(0);
    const list = await t.request().get("/api/v1/export-history").set(auth).expect(200);
    expect(list.body.data.find((e: { id: number }) => e.id === oldEntry.id)).toMatchObject({
      unavailableReason: "expired",
    });
    expect(await deleteExpiredExportFiles(t.ctx.db, t.ctx.storage)).toBe(0);
  });

  it("runs as the worker task export_files__cleanup", async () => {
    const { accountId } = await buildAccount(t.ctx.db);
    const { entries } = await buildExport(deps(), accountId, sampleLeads(1));
    await moveInTime(entries[0]!.id, new Date(Date.now() - 91 * DAY_MS), new Date(Date.now() - DAY_MS));
    const logged: string[] = [];
    const task = exportFilesCleanup(deps());
    await task({}, { logger: { info: (message: string) => logged.push(message) } } as never);
    expect(await t.ctx.storage.size(entries[0]!.storageKey)).toBeUndefined();
    expect(logged).toEqual(["removed 1 expired export file(s)"]);
  });
});
