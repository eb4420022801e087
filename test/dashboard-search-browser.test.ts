import { readFile } from "node:fs/promises";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useJobRunner } from "./helpers/app.js";
import { haveBrowser, useDashboardBrowser, watchErrors } from "./helpers/dashboard-browser.js";
import { buildExport, buildFormat, sampleLeads } from "./helpers/export-factories.js";
import { buildWordLeads, csvRecords } from "./helpers/export-job-factories.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLeads, uniqueWord } from "./helpers/leads-factories.js";

// The lead search and exports pages in Chromium (test/helpers/dashboard-browser.ts): a wildcard
// search, the masked preview, buying a page, an export with a saved format followed to its file,
// presets and keyword lists, the exports page's downloads and re-export, lead fields with markup
// shown as text, and axe-core on both pages.
const d = await useDashboardBrowser();
const { t, base } = d;
useJobRunner(t);

async function methodsOf(accountId: number): Promise<string[]> {
  const rows = await t.ctx.db
    .selectFrom("lead_export_history")
    .select("export_method")
    .where("account_id", "=", accountId)
    .execute();
  return [...new Set(rows.map((r) => r.export_method))];
}

/** The bytes of the download the click starts. */
async function downloadOf(page: Page, click: () => Promise<void>): Promise<{ name: string; body: Buffer }> {
  const [download] = await Promise.all([page.waitForEvent("download"), click()]);
  const path = await download.path();
  return { name: download.suggestedFilename(), body: await readFile(path) };
}

describe.skipIf(!haveBrowser)("the lead search page in Chromium", () => {
  it(
    "searches with a wildcard, previews, buys a page, exports with a saved format and downloads it",
    { timeout: 90_000 },
    async () => {
      const account = await buildAccount(t.ctx.db);
      const { word } = await buildWordLeads(t.ctx.db, 5);
      const names = [0, 1, 2, 3, 4].map((i) => `${word} Company ${i}`);
      // Another account's lead with the word is not this search's business; a lead without it is not matched.
      await buildWordLeads(t.ctx.db, 1);
      const format = await buildFormat(t.ctx.db, account.accountId, { name: "Sales team CSV" });
      const before = (await t.request().get("/api/v1/me").set(account.auth).expect(200)).body.data
        .totalCreditsRemaining as number;

      const { context, page } = await d.signedInPage(account.accountId);
      const errors = watchErrors(page);
      await page.click("nav >> text=Lead search");
      await page.waitForURL(`${base}/search`);
      await page.locator("#search-form").waitFor();

      // A wildcard keyword: `*` runs within one value.
      await page.fill("#keywords", `*${word}*compan*`);
      await page.fill("#states", "tx");
      await page.selectOption("#page-size", "10");
      await page.click("#preview-button");
      await page.locator("#preview-summary").waitFor();
      const summary = await page.locator("#preview-summary").innerText();
      expect(summary).toMatch(/Matching leads\s+5/);
      expect(summary).toMatch(/New to you\s+5/);
      const previewRows = page.locator("#preview-leads tbody tr");
      expect(await previewRows.count()).toBe(5);
      // Contact details of leads not received are masked in the preview.
      const phones = await page.locator("#preview-leads td.phone").allInnerTexts();
      expect(phones.every((p) => p.includes("*"))).toBe(true);
      const emails = await page.locator("#preview-leads td.email").allInnerTexts();
      expect(emails.every((e) => e.includes("*"))).toBe(true);

      // Buy the page with at most 3 credits: the 3 newest leads, with their contacts.
      await page.fill("#max-credits", "3");
      await page.click("#buy-button");
      await page.locator("#bought-leads").waitFor();
      expect(await page.locator("#bought-charge").innerText()).toContain("Charged 3 credits");
      const bought = await page.locator("#bought-leads td.company").allInnerTexts();
      expect(bought).toHaveLength(3);
      for (const name of bought) expect(names).toContain(name);
      const boughtPhones = await page.locator("#bought-leads td.phone").allInnerTexts();
      expect(boughtPhones.some((p) => p.includes("*"))).toBe(false);

      // Export all 5 with the saved format: a job whose progress shows, then the file's link.
      await page
        .locator("#export-format option", { hasText: "Sales team CSV" })
        .waitFor({ state: "attached" });
      await page.selectOption("#export-format", String(format.id));
      const started = page.waitForResponse(
        (res) => res.url().endsWith("/api/v1/leads/export") && res.request().method() === "POST",
      );
      await page.click("#export-button");
      expect((await started).status()).toBe(202);
      await page.locator("#export-progress[data-state='finished']").waitFor();
      expect(await page.locator("#export-progress-text").innerText()).toContain("Finished: 5 leads");
      await page.getByText("Exported 5 leads for 2 credits.").waitFor();
      await page.setViewportSize({ width: 1280, height: 1900 });
      await page.evaluate("window.scrollTo(0, 0)");
      await d.screenshot(page, "search");
      await page.setViewportSize({ width: 1280, height: 720 });

      const file = await downloadOf(page, () => page.locator("#export-files a").first().click());
      expect(file.name).toMatch(/\.csv$/);
      const records = csvRecords(file.body);
      // The saved format's columns (Company, Notes, Phone), every lead, the bought ones included.
      expect(Object.keys(records[0]!)).toEqual(["Company", "Notes", "Phone"]);
      expect(records.map((r) => r.Company).sort()).toEqual([...names].sort());
      for (const name of bought) expect(records.map((r) => r.Company)).toContain(name);

      // 5 credits spent in all; everything recorded as a dashboard delivery.
      const after = (await t.request().get("/api/v1/me").set(account.auth).expect(200)).body.data
        .totalCreditsRemaining as number;
      expect(before - after).toBe(5);
      expect(await methodsOf(account.accountId)).toEqual(["dashboard"]);
      const files = (await t.request().get("/api/v1/export-history").set(account.auth).expect(200)).body
        .data as { exportMethod: string; formatName: string }[];
      expect(files).toEqual([
        expect.objectContaining({ exportMethod: "dashboard", formatName: "Sales team CSV" }),
      ]);
      expect(errors).toEqual([]);
      await context.close();
    },
  );

  it("applies presets and keyword lists and saves the form as a preset", { timeout: 60_000 }, async () => {
    const account = await buildAccount(t.ctx.db);
    const { word } = await buildWordLeads(t.ctx.db, 2);
    await t
      .request()
      .post("/api/v1/keyword-lists")
      .set(account.auth)
      .send({ name: "Our trades", type: "positive", keywords: [`*${word}*`, "plumb*"] })
      .expect(201);
    await t
      .request()
      .post("/api/v1/keyword-lists")
      .set(account.auth)
      .send({ name: "Not these", type: "negative", keywords: ["*franchise*"] })
      .expect(201);
    await t
      .request()
      .post("/api/v1/filter-presets")
      .set(account.auth)
      .send({
        name: "Texas dentists",
        filters: {
          positiveKeywords: ["*dental*"],
          stateInclude: "TX,OK",
          lastBuyingSignalFrom: "2026-01-01",
          zipInclude: ["787"],
        },
      })
      .expect(201);

    const { context, page } = await d.signedInPage(account.accountId);
    const errors = watchErrors(page);
    await page.goto(`${base}/search`);
    await page.locator("#preset option", { hasText: "Texas dentists" }).waitFor({ state: "attached" });
    await page.click("#apply-preset");
    expect(await page.inputValue("#keywords")).toBe("*dental*");
    expect(await page.inputValue("#states")).toBe("TX, OK");
    expect(await page.inputValue("#signal-from")).toBe("2026-01-01");
    expect(await page.locator(".message").innerText()).toBe(
      'Preset "Texas dentists" applied. Not shown by this form, so not applied: zipInclude.',
    );

    await page.locator("#keyword-list option", { hasText: "Our trades" }).waitFor({ state: "attached" });
    await page.selectOption("#keyword-list", { label: "Our trades (positive, 2 keywords)" });
    await page.click("#apply-keyword-list");
    expect(await page.inputValue("#keywords")).toBe(`*dental*, *${word}*, plumb*`);
    await page.selectOption("#keyword-list", { label: "Not these (negative, 1 keywords)" });
    await page.click("#apply-keyword-list");
    expect(await page.inputValue("#negative-keywords")).toBe("*franchise*");

    await page.fill("#preset-name", "Mine");
    await page.click("#save-preset");
    await page.getByText('Preset "Mine" saved.').waitFor();
    const presets = (await t.request().get("/api/v1/filter-presets").set(account.auth).expect(200)).body
      .data as { name: string; filters: Record<string, unknown> }[];
    expect(presets.find((p) => p.name === "Mine")?.filters).toMatchObject({
      positiveKeywords: ["*dental*", `*${word}*`, "plumb*"],
      negativeKeywords: ["*franchise*"],
      stateInclude: ["TX", "OK"],
      lastBuyingSignalFrom: "2026-01-01",
    });

    // The API's errors show as readable messages (400 validation_error), nothing saved.
    await page.fill("#states", "Texas");
    await page.fill("#preset-name", "Broken");
    await page.click("#save-preset");
    await page.locator(".message.error").waitFor();
    expect(await page.locator(".message.error").innerText()).toContain(
      '"TEXAS" is not a two-letter state code',
    );
    await page.click("#preview-button");
    await page.locator(".message.error", { hasText: "two-letter state code" }).waitFor();
    const names = (await t.request().get("/api/v1/filter-presets").set(account.auth).expect(200)).body
      .data as { name: string }[];
    expect(names.map((p) => p.name).sort()).toEqual(["Mine", "Texas dentists"]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it(
    "shows lead fields with markup as text: no element is created and no handler runs",
    { timeout: 60_000 },
    async () => {
      const account = await buildAccount(t.ctx.db);
      const img = `<img src=x onerror="window.__xss=1">`;
      const script = `<script>window.__xss=2</script>`;
      const svg = `<svg onload="window.__xss=3"></svg>`;
      const word = uniqueWord("xss");
      await buildLeads(t.ctx.db, 2, (i) => ({
        company_name: `${img}Acme ${i} & "Co" ${word}`,
        description: `${script} family owned`,
        city: `${svg}Austin`,
        registered_url: `https://${word}-${i}.example.org`,
        category: `<a href="javascript:window.__xss=4">cat</a>`,
      }));

      const { context, page } = await d.signedInPage(account.accountId);
      const errors = watchErrors(page);
      await page.goto(`${base}/search`);
      await page.fill("#keywords", `*${word}*`);
      await page.click("#preview-button");
      await page.locator("#preview-leads tbody tr").nth(1).waitFor();
      for (const table of ["#preview-leads", "#bought-leads"]) {
        if (table === "#bought-leads") {
          await page.click("#buy-button");
          await page.locator("#bought-leads tbody tr").nth(1).waitFor();
        }
        const companies = await page.locator(`${table} td.company`).allInnerTexts();
        expect(companies.sort()).toEqual([`${img}Acme 0 & "Co" ${word}`, `${img}Acme 1 & "Co" ${word}`]);
        expect(await page.locator(`${table} td.city`).first().innerText()).toBe(`${svg}Austin`);
        expect(await page.locator(`${table} td.description`).first().innerText()).toBe(
          `${script} family owned`,
        );
        expect(await page.locator(`${table} img, ${table} script, ${table} svg, ${table} a`).count()).toBe(0);
      }
      expect(await page.locator("#results img, #results script, #results svg").count()).toBe(0);
      expect(await page.evaluate<unknown>("window.__xss")).toBeUndefined();
      // The exports page shows the received leads' stored data: as text too.
      await page.goto(`${base}/exports`);
      await page.locator("#lead-history tbody tr[data-tracking-id]").nth(1).waitFor();
      const received = await page.locator("#lead-history td.company").allInnerTexts();
      expect(received.sort()).toEqual([`${img}Acme 0 & "Co" ${word}`, `${img}Acme 1 & "Co" ${word}`]);
      expect(await page.locator("#lead-history td.city").first().innerText()).toBe(`${svg}Austin`);
      expect(await page.locator("main img, main script, main svg").count()).toBe(0);
      expect(await page.evaluate<unknown>("window.__xss")).toBeUndefined();
      expect(errors).toEqual([]);
      await context.close();
    },
  );

  it(
    "has no serious or critical axe-core violation on the search and exports pages",
    { timeout: 60_000 },
    async () => {
      const account = await buildAccount(t.ctx.db);
      const { word } = await buildWordLeads(t.ctx.db, 3);
      await buildFormat(t.ctx.db, account.accountId, { name: "Axe CSV" });
      const { context, page } = await d.signedInPage(account.accountId, { bypassCSP: true });
      await page.goto(`${base}/search`);
      await page.locator("#search-form").waitFor();
      await d.checkAccessibility(page, "search (empty)");
      await page.fill("#keywords", `*${word}*`);
      await page.click("#preview-button");
      await page.locator("#preview-leads tbody tr").first().waitFor();
      await page.click("#buy-button");
      await page.locator("#bought-leads tbody tr").first().waitFor();
      await page.click("#export-button");
      await page.locator("#export-progress[data-state='finished']").waitFor();
      await d.checkAccessibility(page, "search (results and export)");
      await page.click("nav >> text=Exports");
      await page.locator("#export-history tbody tr[data-export-id]").first().waitFor();
      await page.locator("#lead-history tbody tr[data-tracking-id]").first().waitFor();
      await d.checkAccessibility(page, "exports");
      await context.close();
    },
  );
});

describe.skipIf(!haveBrowser)("first content of the search and exports pages", () => {
  it("draws the heading and the form before any data call returns", { timeout: 60_000 }, async () => {
    const account = await buildAccount(t.ctx.db);
    const { context } = await d.signedInPage(account.accountId);
    const slow =
      /\/api\/v1\/(filter-presets|keyword-lists|export-formats|export-history|lead-export-history)/;
    for (const [path, heading, first] of [
      ["/search", "Lead search", "#search-form"],
      ["/exports", "Exports", "#history-filters"],
    ] as const) {
      // A page of its own whose data calls are each held back 3 seconds.
      const page = await context.newPage();
      let released = false;
      await page.route(slow, async (route) => {
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        released = true;
        await route.continue().catch(() => undefined);
      });
      const started = Date.now();
      await page.goto(`${base}${path}`);
      await page.locator(first).waitFor();
      expect(await page.locator("h1").innerText()).toBe(heading);
      expect(released).toBe(false);
      expect(Date.now() - started).toBeLessThan(2_500);
      await page.close();
    }
    await context.close();
  });
});

describe.skipIf(!haveBrowser)("the exports page in Chromium", () => {
  it(
    "downloads an exported file, refreshes received leads and re-exports them with progress",
    { timeout: 90_000 },
    async () => {
      const account = await buildAccount(t.ctx.db);
      const { word, ids } = await buildWordLeads(t.ctx.db, 3);
      const format = await buildFormat(t.ctx.db, account.accountId, { name: "Team CSV" });
      // An export made with the key, and a file made 100 days ago (past its 90 days).
      const exported = await t
        .request()
        .post("/api/v1/leads/export")
        .set(account.auth)
        .send({ filters: { positiveKeywords: [word] }, inline: false })
        .expect(200);
      const fileId = exported.body.data.exportId as number;
      await buildExport({ db: t.ctx.db, storage: t.ctx.storage }, account.accountId, sampleLeads(2), {
        date: new Date(Date.now() - 100 * 24 * 3600 * 1000),
      });
      // One lead changed since it was received: the refresh finds it.
      await t.ctx.db
        .updateTable("leads")
        .set({ company_name: `${word} Renamed`, last_updated: new Date(), last_buying_signal: new Date() })
        .where("id", "=", ids[0]!)
        .execute();
      const before = (await t.request().get("/api/v1/me").set(account.auth).expect(200)).body.data
        .totalCreditsRemaining as number;

      const { context, page } = await d.signedInPage(account.accountId);
      const errors = watchErrors(page);
      await page.click("nav >> text=Exports");
      await page.waitForURL(`${base}/exports`);
      const fileRow = page.locator(`#export-history tr[data-export-id="${fileId}"]`);
      await fileRow.waitFor();
      expect(await page.locator("#export-history tbody tr", { hasText: "expired" }).count()).toBe(1);

      // Download through the signed link of download-url.
      const file = await downloadOf(page, () => fileRow.locator("button.download").click());
      const names = [0, 1, 2].map((i) => `${word} Company ${i}`);
      // The default columns: one row per lead, each naming its company.
      const exportedRows = csvRecords(file.body);
      expect(exportedRows).toHaveLength(3);
      for (const name of names) {
        expect(exportedRows.filter((r) => Object.values(r).includes(name))).toHaveLength(1);
      }

      // The lead export history: the 3 leads, received through the API.
      const rows = page.locator("#lead-history tbody tr[data-tracking-id]");
      await rows.nth(2).waitFor();
      expect(await rows.count()).toBe(3);
      expect(await page.locator("#lead-history td.method").allInnerTexts()).toEqual(["api", "api", "api"]);
      expect(await page.locator("#lead-history td.city").allInnerTexts()).toEqual([
        "Austin",
        "Austin",
        "Austin",
      ]);

      // Refresh every lead of the page: long work with its progress, 1 changed.
      await page.check("#history-all");
      const refreshStarted = page.waitForResponse((res) =>
        res.url().endsWith("/lead-export-history/refresh"),
      );
      await page.click("#refresh-selected");
      expect((await refreshStarted).status()).toBe(202);
      await page.getByText("Refreshed 3 leads; 1 changed since you received them.").first().waitFor();
      await page.locator("#lead-history td.company", { hasText: `${word} Renamed` }).waitFor();

      // Re-export them with the saved format: a file in memory, and a new row of the export history.
      await page.check("#history-all");
      await page.selectOption("#reexport-format", String(format.id));
      const reexportStarted = page.waitForResponse((res) =>
        res.url().endsWith("/lead-export-history/re-export"),
      );
      await page.click("#reexport-selected");
      expect((await reexportStarted).status()).toBe(202);
      await page.locator("#history-progress[data-state='finished']").waitFor();
      await page.locator("#reexport-download").waitFor();
      await page.locator("#export-history tbody tr[data-export-id]").nth(2).waitFor();
      await page.setViewportSize({ width: 1280, height: 1300 });
      await page.evaluate("window.scrollTo(0, 0)");
      await d.screenshot(page, "exports");
      const again = await downloadOf(page, () => page.click("#reexport-download"));
      const records = csvRecords(again.body);
      expect(Object.keys(records[0]!)).toEqual(["Company", "Notes", "Phone"]);
      expect(records.map((r) => r.Company).sort()).toEqual([`${word} Renamed`, names[1], names[2]].sort());

      // Nothing charged by refresh and re-export.
      const after = (await t.request().get("/api/v1/me").set(account.auth).expect(200)).body.data
        .totalCreditsRemaining as number;
      expect(after).toBe(before);
      expect(errors).toEqual([]);
      await context.close();
    },
  );

  it("shows the API's refusal as a readable message", { timeout: 60_000 }, async () => {
    const account = await buildAccount(t.ctx.db);
    const { context, page } = await d.signedInPage(account.accountId);
    await page.goto(`${base}/exports`);
    await page.locator("#history-filters").waitFor();
    await page.click("#refresh-selected");
    await page.getByText("Select at least one lead first.").waitFor();
    // A date the API refuses (year 0): its 400 message is shown.
    await page.evaluate(
      "(() => { const i = document.getElementById('history-from'); i.type = 'text'; i.value = '0000-01-01'; })()",
    );
    await page.click("#history-filters button");
    await page.locator(".message.error", { hasText: "dateFrom" }).waitFor();
    await context.close();
  });
});
