import { readFile } from "node:fs/promises";
import type { Runner } from "graphile-worker";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closePageAgent, Outbound } from "../src/outbound/index.js";
import { haveBrowser, useDashboardBrowser, watchErrors } from "./helpers/dashboard-browser.js";
import { csvRecords } from "./helpers/export-job-factories.js";
import { buildAccount } from "./helpers/factories.js";
import { startEnrichmentRunner } from "./helpers/jobs-factories.js";
import { buildLead, markReceived, uniqueWord } from "./helpers/leads-factories.js";
import {
  homePage,
  jsonLd,
  startSmallBusinessSites,
  type SmallBusinessSites,
} from "./helpers/small-business-sites.js";

// The enrichments page in Chromium (test/helpers/dashboard-browser.ts): websites submitted from
// the page, matched against leads of the database or read live from local sites by the worker's
// enrichment task, the run followed with its progress to its final credits, its results shown as
// text and downloaded; the API's refusals as messages; axe-core; and deleting presets and keyword
// lists from the search page.
const d = await useDashboardBrowser();
const { t, base } = d;

// Live fetches reach the local sites: every host name resolves to 127.0.0.1, which this policy
// treats as public (as in test/enrichments.test.ts).
const outbound = new Outbound({
  allowPrivate: false,
  refuses: (ip) => ip !== "127.0.0.1",
  resolve: async () => ["127.0.0.1"],
});
let sites: SmallBusinessSites;
let runner: Runner | undefined;

beforeAll(async () => {
  if (!haveBrowser) return;
  sites = await startSmallBusinessSites();
  runner = await startEnrichmentRunner(t.ctx, outbound, 2);
}, 30_000);

afterAll(async () => {
  await runner?.stop();
  await closePageAgent(outbound);
  outbound.close();
  await sites?.close();
});

/** The bytes of the download the click starts. */
async function downloadOf(page: Page, click: () => Promise<void>): Promise<{ name: string; body: Buffer }> {
  const [download] = await Promise.all([page.waitForEvent("download"), click()]);
  return { name: download.suggestedFilename(), body: await readFile(await download.path()) };
}

async function balanceOf(auth: { Authorization: string }): Promise<number> {
  const me = await t.request().get("/api/v1/me").set(auth).expect(200);
  return me.body.data.totalCreditsRemaining as number;
}

const img = `<img src=x onerror="window.__xss=1">`;
const svg = `<svg onload="window.__xss=2"></svg>`;

describe.skipIf(!haveBrowser)("the enrichments page in Chromium", () => {
  it(
    "submits websites, follows the run to its final credits, shows the results as text and downloads them",
    { timeout: 120_000 },
    async () => {
      const account = await buildAccount(t.ctx.db);
      const paid = `${uniqueWord()}.test`;
      const free = `${uniqueWord()}.test`;
      const live = `${uniqueWord()}.test`;
      const slow = `${uniqueWord()}.test`;
      const down = `${uniqueWord()}.test`;
      // Two leads of the database: one new to the account (1 credit), one it already has (free).
      await buildLead(t.ctx.db, { registered_url: `https://www.${paid}`, company_name: `${img}Paid & "Co"` });
      const freeLead = await buildLead(t.ctx.db, { crawled_url: `https://${free}/home` });
      await markReceived(t.ctx.db, account.accountId, [freeLead]);
      // A live site whose business name carries markup (0.1 credit), a slow one without contact
      // details (free; it keeps the run running a while), one that fails.
      sites.add(live, {
        "/": homePage({
          name: "Live Co",
          head: jsonLd({ "@type": "LocalBusiness", name: `${svg}Live Co LLC`, telephone: "512-472-3391" }),
        }),
      });
      sites.add(slow, { "/": { body: homePage({ name: "Slow Co" }), delayMs: 2_500 } });
      sites.add(down, { "/": { status: 500, body: "oops" } });
      const before = await balanceOf(account.auth);

      const { context, page } = await d.signedInPage(account.accountId);
      const errors = watchErrors(page);
      await page.click("nav >> text=Enrichments");
      await page.waitForURL(`${base}/enrichments`);
      await page.locator("#enrichment-runs", { hasText: "No runs yet." }).waitFor();
      const submitted = [
        `https://${paid}/contact-us`,
        sites.url(free),
        sites.url(live),
        sites.url(slow),
        sites.url(down),
        "this is not a url",
        `${sites.url(live)}about`,
      ];
      await page.fill("#enrichment-urls", submitted.join("\n") + "\n\n");
      const started = page.waitForResponse(
        (res) => res.url().endsWith("/api/v1/enrichments") && res.request().method() === "POST",
      );
      await page.click("#enrichment-submit");
      expect((await started).status()).toBe(202);
      const runId = (await t.request().get("/api/v1/enrichments").set(account.auth).expect(200)).body.data[0]
        .id as number;
      await page
        .getByText(`Run #${runId} started: 6 website(s), 1 duplicate(s) removed, 1 not a usable website`)
        .waitFor();

      // The progress while it runs (the slow site holds it 2.5 s), then the finished run.
      await page.locator("#enrichment-progress[data-state='running']").waitFor();
      expect(await page.locator("#enrichment-progress-text").innerText()).toMatch(
        new RegExp(`^Run #${runId}: .+, \\d of 6 websites done\\.$`),
      );
      await page.locator("#enrichment-progress[data-state='finished']").waitFor({ timeout: 60_000 });
      expect(await page.locator("#enrichment-progress-text").innerText()).toBe(
        `Run #${runId}: Completed, 6 of 6 websites done.`,
      );
      const credits = page.locator("#enrichment-summary .run-credits");
      expect(await credits.innerText()).toMatch(/^database 1 \+ live 0\.1 = 1\.1 credits \(final; limit \d+/);
      const row = page.locator(`#enrichment-runs tr[data-run-id="${runId}"]`);
      await row.locator("td.status", { hasText: "completed" }).waitFor();
      expect(await row.locator("td.credits").innerText()).toMatch(/^1\.1 credits \(final;/);

      // The API agrees, and 1.1 credits were spent.
      const run = (await t.request().get(`/api/v1/enrichments/${runId}`).set(account.auth).expect(200)).body
        .data;
      expect(run).toMatchObject({
        status: "completed",
        database: { charged: 1, free: 1 },
        live: { delivered: 1, failed: 1, noRequestedContact: 1 },
        credits: { total: 1.1, final: true },
        result: { rowCount: 6, ready: true },
      });
      expect(before - (await balanceOf(account.auth))).toBeCloseTo(1.1, 5);

      // The results in the page: company names with markup are text, no element is created.
      const companies = page.locator("#enrichment-result-rows td.company");
      await companies.first().waitFor();
      expect(await page.locator("#enrichment-result-rows td.row-status").allInnerTexts()).toEqual([
        "matched_paid",
        "matched_free",
        "scraped",
        "scraped_no_contact",
        "scrape_failed",
        "skipped_invalid",
      ]);
      const names = await companies.allInnerTexts();
      expect(names[0]).toBe(`${img}Paid & "Co"`);
      expect(names[2]).toContain("Live Co LLC");
      expect(await page.locator("main img, main script, main svg").count()).toBe(0);
      expect(await page.evaluate<unknown>("window.__xss")).toBeUndefined();
      await page.setViewportSize({ width: 1280, height: 1500 });
      await page.evaluate("window.scrollTo(0, 0)");
      await d.screenshot(page, "enrichments");
      await page.setViewportSize({ width: 1280, height: 720 });

      // The download: the CSV of the run, one row per website, the same names as the page.
      const file = await downloadOf(page, () => page.click("#enrichment-download"));
      expect(file.name).toMatch(/\.csv$/);
      const records = csvRecords(file.body);
      expect(records.map((r) => [r["Submitted URL"], r.Status, r.Source, r["Credits Charged"]])).toEqual([
        [`https://${paid}/contact-us`, "matched_paid", "database", "1"],
        [sites.url(free), "matched_free", "database", "0"],
        [sites.url(live), "scraped", "live_scrape", "0.1"],
        [sites.url(slow), "scraped_no_contact", "none", "0"],
        [sites.url(down), "scrape_failed", "none", "0"],
        ["this is not a url", "skipped_invalid", "none", "0"],
      ]);
      expect(records.map((r) => r.companyName)).toEqual(names);
      expect(records[2]?.phone).toBe("(512) 472-3391");

      // The runs table's Download gives the same file.
      const again = await downloadOf(page, () => row.locator("button.download").click());
      expect(again.body.equals(file.body)).toBe(true);
      expect(errors).toEqual([]);
      await context.close();
    },
  );

  it("shows the API's refusals as readable messages and starts nothing", { timeout: 60_000 }, async () => {
    const account = await buildAccount(t.ctx.db);
    const before = await balanceOf(account.auth);
    const { context, page } = await d.signedInPage(account.accountId);
    await page.goto(`${base}/enrichments`);
    await page.locator("#enrichment-runs", { hasText: "No runs yet." }).waitFor();

    // An empty list (blank lines only): 400 invalid_request, its message and details shown.
    await page.fill("#enrichment-urls", "\n  \n");
    await page.click("#enrichment-submit");
    const error = page.locator(".message.error");
    await error.waitFor();
    expect(await error.innerText()).toContain("urls");
    // A negative credit limit.
    await page.fill("#enrichment-urls", "https://example.com");
    await page.fill("#enrichment-max-credits", "-1");
    await page.click("#enrichment-submit");
    await page.locator(".message.error", { hasText: "maxCredits" }).waitFor();
    // A share above 100 %.
    await page.fill("#enrichment-max-credits", "");
    await page.fill("#enrichment-db-percent", "150");
    await page.click("#enrichment-submit");
    await page.locator(".message.error", { hasText: "databaseMatchPercent" }).waitFor();

    const runs = await t.request().get("/api/v1/enrichments").set(account.auth).expect(200);
    expect(runs.body.totalCount).toBe(0);
    expect(await balanceOf(account.auth)).toBe(before);
    await context.close();
  });

  it("has no serious or critical axe-core violation", { timeout: 90_000 }, async () => {
    const account = await buildAccount(t.ctx.db);
    const host = `${uniqueWord()}.test`;
    sites.add(host, {
      "/": homePage({ name: "Axe Co", footer: `<p>Call <a href="tel:+15124723391">(512) 472-3391</a></p>` }),
    });
    const { context, page } = await d.signedInPage(account.accountId, { bypassCSP: true });
    await page.goto(`${base}/enrichments`);
    await page.locator("#enrichment-runs", { hasText: "No runs yet." }).waitFor();
    await d.checkAccessibility(page, "enrichments (empty)");
    await page.fill("#enrichment-urls", sites.url(host));
    await page.click("#enrichment-submit");
    await page.locator("#enrichment-result-rows td.company").first().waitFor({ timeout: 60_000 });
    await d.checkAccessibility(page, "enrichments (finished run)");
    await context.close();
  });

  it("draws the heading and the form before any data call returns", { timeout: 60_000 }, async () => {
    const account = await buildAccount(t.ctx.db);
    const { context, page } = await d.signedInPage(account.accountId);
    let released = false;
    await page.route(/\/api\/v1\/enrichments/, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      released = true;
      await route.continue().catch(() => undefined);
    });
    const started = Date.now();
    await page.goto(`${base}/enrichments`);
    await page.locator("#enrichment-form").waitFor();
    expect(await page.locator("h1").innerText()).toBe("Enrichments");
    expect(released).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_500);
    await context.close();
  });
});

describe.skipIf(!haveBrowser)("deleting presets and keyword lists from the search page", () => {
  it("deletes a preset and a keyword list after a confirmation", { timeout: 60_000 }, async () => {
    const account = await buildAccount(t.ctx.db);
    const other = await buildAccount(t.ctx.db);
    const list = await t
      .request()
      .post("/api/v1/keyword-lists")
      .set(account.auth)
      .send({ name: "Old trades", type: "positive", keywords: ["plumb*"] })
      .expect(201);
    const preset = await t
      .request()
      .post("/api/v1/filter-presets")
      .set(account.auth)
      .send({ name: "Old preset", filters: { positiveKeywords: ["*dental*"], stateInclude: "TX" } })
      .expect(201);
    await t
      .request()
      .post("/api/v1/filter-presets")
      .set(account.auth)
      .send({ name: "Kept preset", filters: { positiveKeywords: ["*dental*"], stateInclude: "OK" } })
      .expect(201);
    // Another account's preset of the same name is not touched.
    await t
      .request()
      .post("/api/v1/filter-presets")
      .set(other.auth)
      .send({ name: "Old preset", filters: { positiveKeywords: ["*dental*"], stateInclude: "TX" } })
      .expect(201);

    const { context, page } = await d.signedInPage(account.accountId);
    const errors = watchErrors(page);
    await page.goto(`${base}/search`);
    await page.locator("#preset option", { hasText: "Old preset" }).waitFor({ state: "attached" });
    await page.selectOption("#preset", String(preset.body.data.id));

    // Dismissing the confirmation deletes nothing.
    page.once("dialog", (dialog) => {
      expect(dialog.message()).toBe('Delete the preset "Old preset"?');
      void dialog.dismiss();
    });
    await page.click("#delete-preset");
    const stillThere = await t.request().get("/api/v1/filter-presets").set(account.auth).expect(200);
    expect((stillThere.body.data as { name: string }[]).map((p) => p.name).sort()).toEqual([
      "Kept preset",
      "Old preset",
    ]);

    page.once("dialog", (dialog) => void dialog.accept());
    await page.click("#delete-preset");
    await page.getByText('Preset "Old preset" deleted.').waitFor();
    await page.locator("#preset option", { hasText: "Old preset" }).waitFor({ state: "detached" });

    await page.locator("#keyword-list option", { hasText: "Old trades" }).waitFor({ state: "attached" });
    await page.selectOption("#keyword-list", String(list.body.data.id));
    page.once("dialog", (dialog) => {
      expect(dialog.message()).toBe('Delete the keyword list "Old trades"?');
      void dialog.accept();
    });
    await page.click("#delete-keyword-list");
    await page.getByText('Keyword list "Old trades" deleted.').waitFor();
    await page
      .locator("#keyword-list option", { hasText: "No keyword lists yet" })
      .waitFor({ state: "attached" });

    const presets = await t.request().get("/api/v1/filter-presets").set(account.auth).expect(200);
    expect((presets.body.data as { name: string }[]).map((p) => p.name)).toEqual(["Kept preset"]);
    const lists = await t.request().get("/api/v1/keyword-lists").set(account.auth).expect(200);
    expect(lists.body.data).toEqual([]);
    const others = await t.request().get("/api/v1/filter-presets").set(other.auth).expect(200);
    expect((others.body.data as { name: string }[]).map((p) => p.name)).toEqual(["Old preset"]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
