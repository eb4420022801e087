import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAccountWithKey } from "../../src/accounts/service.js";
import { createDatabase, migrateToLatest } from "../../src/db/database.js";
import { PAGE_PATHS } from "../../src/dashboard/page.js";
import { CHROMIUM } from "../../test/helpers/chromium.js";
import { tokenOf, waitForSignInLink } from "../../test/helpers/mail-files.js";
import { ensureLeads, startService, stopProcess } from "./lib.js";
import { searchDatabase } from "./search.js";

const LEADS = Number(process.env.BENCH_SEARCH_LEADS ?? 1_000_000);
const SEED = 42;
/** Loads of each page measured (after one unmeasured load of each). */
const LOADS = Number(process.env.BENCH_DASHBOARD_LOADS ?? 10);
/** Pages of leads the account buys first, so its history, usage and exports are not empty. */
const PAGES_BOUGHT = 5;

interface PageTimes {
  firstContentMs: number;
  settledMs: number;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0);
};

/**
 * The dashboard's pages in Debian's Chromium (playwright-core) against `npm start` over the search
 * bench's database (1,000,000 leads; BENCH_SEARCH_DATA_DIR keeps it between runs), signed in by
 * the e-mailed link as a customer is: for each page, the time from navigation to its first
 * contentful paint (the browser's own `first-contentful-paint` entry) and to the end of the last
 * answer it loaded (its script, style sheet and data calls). The account has bought a few pages of leads first.
 */
export async function benchDashboard(runnerUrl: string): Promise<Record<string, unknown>> {
  const database = await searchDatabase(runnerUrl);
  const dataDir = mkdtempSync(join(tmpdir(), "lead-bench-dashboard-"));
  const { db } = createDatabase(database.url, 2);
  try {
    await migrateToLatest(db);
    const loaded = await ensureLeads(db, LEADS, SEED);
    const email = `bench-dashboard-${Date.now()}@example.com`;
    const { apiKey } = await createAccountWithKey(db, {
      email,
      plan: "enterprise",
      permanentCredits: 100_000,
    });
    const { base, service } = await startService(database.url, dataDir);
    try {
      const auth = { Authorization: `Bearer ${apiKey}` };
      for (const keyword of ["plumb", "roof", "dental", "salon", "bakery"].slice(0, PAGES_BOUGHT)) {
        const res = await fetch(`${base}/api/v1/leads?positiveKeywords=${keyword}&limit=50`, {
          headers: auth,
        });
        if (res.status !== 200) throw new Error(`buying a page answered ${res.status}`);
      }
      const cookie = await signIn(base, dataDir, email);
      const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
      try {
        const context = await browser.newContext();
        await context.addCookies([{ name: "svc_session", value: cookie, url: base }]);
        const page = await context.newPage();
        const pages: Record<string, unknown> = {};
        for (const path of PAGE_PATHS) {
          const times: PageTimes[] = [];
          for (let i = 0; i <= LOADS; i += 1) {
            await page.goto(`${base}${path}`, { waitUntil: "networkidle" });
            const firstContentMs = await page.evaluate<number>(
              "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1",
            );
            // The last answer the page waited for (its data calls), from the navigation's start.
            const settledMs = await page.evaluate<number>(
              "Math.max(...performance.getEntriesByType('resource').map((e) => e.responseEnd), 0)",
            );
            if (i > 0) times.push({ firstContentMs, settledMs });
          }
          const first = times.map((t) => t.firstContentMs);
          const settled = times.map((t) => t.settledMs);
          pages[path] = {
            firstContentMs: { p50: percentile(first, 50), max: Math.max(...first.map(Math.round)) },
            settledMs: { p50: percentile(settled, 50), max: Math.round(Math.max(...settled)) },
          };
        }
        return { leads: loaded.leads, loadsPerPage: LOADS, pages };
      } finally {
        await browser.close();
      }
    } finally {
      await stopProcess(service);
    }
  } finally {
    await db.destroy();
    await database.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Signs in as a customer does: asks for a link, takes it from the mail the service wrote, posts its token. */
async function signIn(base: string, dataDir: string, email: string): Promise<string> {
  const asked = await fetch(`${base}/api/v1/auth/sign-in-links`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email }),
  });
  if (asked.status !== 202) throw new Error(`the sign-in link request answered ${asked.status}`);
  const link = await waitForSignInLink(dataDir, email, 0, 30_000);
  const signedIn = await fetch(`${base}/api/v1/auth/sessions`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token: tokenOf(link) }),
  });
  const cookie = /svc_session=([^;]+)/.exec(signedIn.headers.get("set-cookie") ?? "")?.[1];
  if (!cookie) throw new Error(`signing in answered ${signedIn.status} without a session cookie`);
  return cookie;
}
