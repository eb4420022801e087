import { existsSync } from "node:fs";
import type { Server } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import type { Config } from "../../src/config.js";
import { useTestApp, type TestApp } from "./app.js";
import { CHROMIUM } from "./chromium.js";

export { CHROMIUM };
import { mailsTo, useMailRunner, waitForSignInLink } from "./dashboard-sign-in.js";
import { listenPort } from "./ports.js";

/**
 * The dashboard in a real Chromium (Debian's package, driven by playwright-core; never a
 * downloaded browser), for a whole test file: the test app listening on a local port, the mail
 * runner that writes sign-in mails, and one browser. Without chromium the file's tests are
 * skipped (`describe.skipIf(!haveBrowser)`), except under .ci/run (REQUIRE_BROWSER=1), which
 * installs it.
 */
export const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.REQUIRE_BROWSER)
  throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);

/** axe-core's browser script (injected into each page; the contexts that run it bypass the CSP). */
const AXE_PATH = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** With DASHBOARD_SCREENSHOTS=<folder>, flows save the screenshots of docs/dashboard.md there. */
const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown }[];
}

export interface DashboardBrowser {
  t: TestApp;
  /** `http://127.0.0.1:<port>`, the app's PUBLIC_BASE_URL. */
  base: string;
  browser(): Browser;
  emailOf(accountId: number): Promise<string>;
  /** Signs the page in through the link of the mail the service wrote; ends on the overview. */
  signIn(page: Page, accountId: number): Promise<void>;
  /** A new browser context and page, signed in as the account. */
  signedInPage(
    accountId: number,
    options?: { bypassCSP?: boolean },
  ): Promise<{ context: BrowserContext; page: Page }>;
  /** Fails on any serious or critical axe-core violation of the page (its context must bypass the CSP). */
  checkAccessibility(page: Page, name: string): Promise<void>;
  screenshot(page: Page, name: string): Promise<void>;
}

/** Errors a page raised, and CSP refusals it reported on its console (collected as they come). */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(err.message));
  page.on("console", (msg) => {
    // An error answer of the API is logged by Chromium as a failed resource: expected, not a fault.
    if (msg.type() === "error" && !msg.text().startsWith("Failed to load resource")) errors.push(msg.text());
  });
  return errors;
}

/** Call at the top of a test file: `const d = await useDashboardBrowser();`. */
export async function useDashboardBrowser(overrides: Partial<Config> = {}): Promise<DashboardBrowser> {
  const port = await listenPort();
  const base = `http://127.0.0.1:${port}`;
  const t = useTestApp({ publicBaseUrl: base, ...overrides });
  useMailRunner(t);
  let server: Server | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    if (!haveBrowser) return;
    server = await new Promise<Server>((resolve) => {
      const s = t.app.listen(port, "127.0.0.1", () => resolve(s));
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });

  const emailOf = async (accountId: number) => {
    const row = await t.ctx.db
      .selectFrom("accounts")
      .select("email")
      .where("id", "=", accountId)
      .executeTakeFirstOrThrow();
    return row.email;
  };

  const signIn = async (page: Page, accountId: number) => {
    const email = await emailOf(accountId);
    const known = (await mailsTo(t.ctx.config.dataDir, email)).length;
    await page.goto(`${base}/sign-in`);
    await page.fill("#email", email);
    await page.click("#sign-in-form button");
    await page.getByText("a sign-in link valid for 15 minutes is on its way").waitFor();
    await page.goto(await waitForSignInLink(t.ctx.config.dataDir, email, known));
    await page.waitForURL(`${base}/`);
  };

  return {
    t,
    base,
    browser: () => browser!,
    emailOf,
    signIn,
    async signedInPage(accountId, options = {}) {
      const context = await browser!.newContext({ bypassCSP: options.bypassCSP ?? false });
      const page = await context.newPage();
      await signIn(page, accountId);
      return { context, page };
    },
    async checkAccessibility(page, name) {
      await page.addScriptTag({ path: AXE_PATH });
      const result = await page.evaluate<{ violations: AxeViolation[]; passes: number }>(
        "axe.run(document).then((r) => ({ violations: r.violations, passes: r.passes.length }))",
      );
      // axe ran its rules on the page (not an empty document).
      expect(result.passes).toBeGreaterThan(5);
      const grave = result.violations
        .filter((v) => v.impact === "serious" || v.impact === "critical")
        .map(
          (v) =>
            `${name}: ${v.id} (${v.impact}) ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`,
        );
      expect(grave).toEqual([]);
    },
    async screenshot(page, name) {
      if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
    },
  };
}
