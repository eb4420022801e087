import { describe, expect, it } from "vitest";
import { haveBrowser, useDashboardBrowser } from "./helpers/dashboard-browser.js";
import { buildAccount } from "./helpers/factories.js";
import { waitForSignInLink } from "./helpers/dashboard-sign-in.js";

// The dashboard in a real Chromium: sign in through the e-mailed link, manage keys, sign out, and
// the security properties a page must keep (test/helpers/dashboard-browser.ts).
const d = await useDashboardBrowser();
const { t, base } = d;
const emailOf = d.emailOf;
const screenshot = d.screenshot;

describe.skipIf(!haveBrowser)("the dashboard in Chromium", () => {
  it(
    "signs in by the mailed link, creates, uses and revokes a key, signs out",
    { timeout: 60_000 },
    async () => {
      const account = await buildAccount(t.ctx.db);
      const email = await emailOf(account.accountId);
      // A company name with markup: the overview shows it as text.
      const hostile = `<img src=x onerror="window.__xss=1">Acme & "Co"`;
      await t.request().patch("/api/v1/me").set(account.auth).send({ companyName: hostile }).expect(200);

      const context = await d.browser().newContext();
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (err) => errors.push(err.message));

      // Sign-in page: the security headers, then a link by e-mail.
      const signInPage = await page.goto(`${base}/sign-in`);
      const headers = signInPage!.headers();
      expect(headers["content-security-policy"]).toContain("script-src 'self'");
      expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
      expect(headers["content-security-policy"]).not.toContain("unsafe-inline");
      await page.fill("#email", email);
      await page.click("#sign-in-form button");
      await page.getByText("a sign-in link valid for 15 minutes is on its way").waitFor();
      await screenshot(page, "sign-in");

      const link = await waitForSignInLink(t.ctx.config.dataDir, email);
      expect(link.startsWith(`${base}/sign-in#token=`)).toBe(true);
      await page.goto(link);
      await page.waitForURL(`${base}/`);
      await page.locator("#overview").waitFor();
      await page.locator("#usage dd").first().waitFor();
      await screenshot(page, "overview");
      const overview = await page.locator("#overview").innerText();
      expect(overview).toContain("growth");
      expect(overview).toContain(hostile);
      expect(await page.locator("#overview img").count()).toBe(0);
      await page.locator("#usage dd").first().waitFor();
      expect(await page.locator("#usage").innerText()).toMatch(/Leads received\s+0/);

      // The session is an HttpOnly cookie; nothing is kept in the page's storage.
      const cookies = await context.cookies();
      const session = cookies.find((c) => c.name === "svc_session")!;
      expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", secure: false });
      const storage = await page.evaluate<string>(
        "JSON.stringify([{ ...localStorage }, { ...sessionStorage }])",
      );
      expect(storage).toBe("[{},{}]");
      expect(await page.evaluate<string>("document.cookie")).not.toContain("svc_session");

      // API keys: create one (its name is markup, shown as text), use it, revoke it.
      await page.click("nav >> text=API keys");
      await page.locator("#keys tbody tr").first().waitFor();
      const keyName = `<b onmouseover="window.__xss=1">bold</b>`;
      await page.fill("#key-name", keyName);
      await page.click("#create-key button");
      const secret = await page.locator("#new-key-secret").innerText();
      expect(secret).toMatch(/^svck_[A-Za-z0-9]{40}$/);
      await page.locator("#keys tbody tr", { hasText: keyName }).waitFor();
      await screenshot(page, "api-keys");
      expect(await page.locator("#keys b").count()).toBe(0);
      const used = await fetch(`${base}/api/v1/me`, { headers: { Authorization: `Bearer ${secret}` } });
      expect(used.status).toBe(200);
      expect(((await used.json()) as { data: { id: number } }).data.id).toBe(account.accountId);

      const row = page.locator("#keys tbody tr", { hasText: keyName });
      await row.locator("button").click();
      await row.locator(".state", { hasText: "revoked" }).waitFor();
      const refused = await fetch(`${base}/api/v1/me`, { headers: { Authorization: `Bearer ${secret}` } });
      expect(refused.status).toBe(401);
      expect(await page.evaluate<unknown>("window.__xss")).toBeUndefined();

      // Sign out: the page goes back to sign-in and the old session cookie is refused.
      await page.click("#sign-out");
      await page.waitForURL(`${base}/sign-in`);
      const after = await fetch(`${base}/api/v1/me`, { headers: { Cookie: `svc_session=${session.value}` } });
      expect(after.status).toBe(401);
      expect(errors).toEqual([]);
      await context.close();
    },
  );

  it(
    "refuses a forged call without the CSRF token and another account's key through the session",
    { timeout: 40_000 },
    async () => {
      const account = await buildAccount(t.ctx.db);
      const other = await buildAccount(t.ctx.db);
      const email = await emailOf(account.accountId);
      const context = await d.browser().newContext();
      const page = await context.newPage();
      await page.goto(`${base}/sign-in`);
      await page.fill("#email", email);
      await page.click("#sign-in-form button");
      await page.goto(await waitForSignInLink(t.ctx.config.dataDir, email));
      await page.waitForURL(`${base}/`);

      // A script on the page (as a forged form or fetch would) without the token: 403, nothing made.
      const forged = await page.evaluate(async () => {
        const res = await fetch("/api/v1/api-keys", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ name: "forged" }),
        });
        return { status: res.status, body: (await res.json()) as { error: string } };
      });
      expect(forged).toEqual({ status: 403, body: expect.objectContaining({ error: "forbidden" }) });

      // With the session's own token, another account's key is not found and stays usable.
      const sessionRes = await page.request.get(`${base}/api/v1/auth/session`);
      const csrf = ((await sessionRes.json()) as { data: { csrfToken: string } }).data.csrfToken;
      const otherKeys = await t.request().get("/api/v1/api-keys").set(other.auth).expect(200);
      const otherKeyId = otherKeys.body.data[0].id as number;
      const cross = await page.request.post(`${base}/api/v1/api-keys/${otherKeyId}/revoke`, {
        headers: { "X-CSRF-Token": csrf },
      });
      expect(cross.status()).toBe(404);
      await t.request().get("/api/v1/me").set(other.auth).expect(200);
      const mine = await page.request.get(`${base}/api/v1/api-keys`);
      const ids = ((await mine.json()) as { data: { id: number; name: string }[] }).data;
      expect(ids.map((k) => k.id)).not.toContain(otherKeyId);
      expect(ids.map((k) => k.name)).not.toContain("forged");
      await context.close();
    },
  );

  it("has no serious or critical axe-core violation on any page", { timeout: 40_000 }, async () => {
    const account = await buildAccount(t.ctx.db);
    const email = await emailOf(account.accountId);
    // axe-core is injected as an inline script, which the pages' CSP refuses: this context only bypasses it.
    const context = await d.browser().newContext({ bypassCSP: true });
    const page = await context.newPage();
    const check = (name: string) => d.checkAccessibility(page, name);
    await page.goto(`${base}/sign-in`);
    await page.locator("#sign-in-form").waitFor();
    await check("sign-in");
    await page.fill("#email", email);
    await page.click("#sign-in-form button");
    await page.goto(await waitForSignInLink(t.ctx.config.dataDir, email));
    await page.waitForURL(`${base}/`);
    await page.locator("#overview").waitFor();
    await check("overview");
    await page.goto(`${base}/keys`);
    await page.locator("#keys tbody tr").first().waitFor();
    await check("keys");
    await context.close();
  });
});
