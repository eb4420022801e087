import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extractContacts, deobfuscate } from "../src/enrichments/crawler/contacts.js";
import { crawlSite, DEFAULT_CRAWL_OPTIONS } from "../src/enrichments/crawler/crawl-site.js";
import { HostGate } from "../src/enrichments/crawler/host-gate.js";
import { prepareUrls, websiteHost } from "../src/enrichments/urls.js";
import { closePageAgent, Outbound } from "../src/outbound/index.js";
import {
  cloudflareProtected,
  homePage,
  jsonLd,
  startSmallBusinessSites,
  type SmallBusinessSites,
} from "./helpers/small-business-sites.js";

// The crawler of live enrichment against local small-business sites (every host name resolves to
// 127.0.0.1 through a resolver stub; 127.0.0.2 plays an internal address).

let sites: SmallBusinessSites;
const outbound = new Outbound({
  allowPrivate: false,
  refuses: (ip) => ip !== "127.0.0.1",
  resolve: async (host) => (host.startsWith("internal.") ? ["127.0.0.2"] : ["127.0.0.1"]),
});
const options = { ...DEFAULT_CRAWL_OPTIONS, pageTimeoutMs: 2_000 };

beforeAll(async () => {
  sites = await startSmallBusinessSites();
});
afterAll(async () => {
  await closePageAgent(outbound);
  outbound.close();
  await sites.close();
});

describe("extractContacts", () => {
  it("reads tel: and mailto: links, JSON-LD, plain text and obfuscated addresses", () => {
    const html = homePage({
      name: "Lone Star Plumbing",
      head: jsonLd({
        "@type": "Plumber",
        name: "Lone Star Plumbing LLC",
        telephone: "+1 512-472-3391",
        email: "office@lonestarplumbing.test",
      }),
      footer: `<p><a href="tel:+1-737-201-4455">Call (737) 201-4455</a></p>
        <p><a href="mailto:Info@LoneStarPlumbing.test?subject=Quote%20request">Email us</a></p>
        <p>Billing: billing [at] lonestarplumbing [dot] test, or dispatch AT lonestarplumbing DOT test</p>
        <p>Emergency line 512.833.9090 — open 24/7 at 1200 Oak St.</p>
        <p>${cloudflareProtected("owner@lonestarplumbing.test")}</p>`,
    });
    const found = extractContacts(html, "https://www.lonestarplumbing.test/");
    expect(found.emails).toEqual([
      "info@lonestarplumbing.test",
      "owner@lonestarplumbing.test",
      "office@lonestarplumbing.test",
      "billing@lonestarplumbing.test",
      "dispatch@lonestarplumbing.test",
    ]);
    expect(found.phones).toEqual(["(737) 201-4455", "(512) 472-3391", "(512) 833-9090"]);
    expect(found.companyName).toBe("Lone Star Plumbing LLC");
  });

  it("ignores file names, placeholders and text that only looks like contacts", () => {
    const html = homePage({
      name: "Hill Country Dental",
      footer: `<p>Order #123-456-7890123. Since 1998. Call us at 9am. Zip 78701.</p>
        <img src="/img/team@3x.jpg"> <p>you@example.com</p>`,
    });
    const found = extractContacts(html, "http://hillcountrydental.test/");
    expect(found.emails).toEqual([]);
    expect(found.phones).toEqual([]);
    expect(found.companyName).toBe("Hill Country Dental");
  });

  it("finds the contact and about pages of the same site only", () => {
    const html = homePage({
      name: "Bee Cave Roofing",
      links: `<a href="https://facebook.com/beecaveroofing">Contact us on Facebook</a>
        <a href="/about-us/">About</a> <a href="https://www.beecaveroofing.test/contact#form">Get a quote</a>`,
    });
    const found = extractContacts(html, "https://beecaveroofing.test/");
    expect(found.contactPage).toBe("https://www.beecaveroofing.test/contact");
    expect(found.aboutPage).toBe("https://beecaveroofing.test/about-us/");
  });

  it("de-obfuscates only the written forms of @ and .", () => {
    expect(deobfuscate("joe (at) shop (dot) co (dot) uk")).toBe("joe@shop.co.uk");
    expect(deobfuscate("meet us at the shop, dot the i's")).toBe("meet us at the shop, dot the i's");
  });
});

describe("websiteHost and prepareUrls", () => {
  it("reads the host as matching compares it, and refuses what is not a website", () => {
    expect(websiteHost("https://WWW.Joes-Plumbing.com:8443/contact?x=1")).toBe("joes-plumbing.com");
    expect(websiteHost("joesplumbing.com/about")).toBe("joesplumbing.com");
    expect(websiteHost("  http://shop.example.co.uk.  ")).toBe("shop.example.co.uk");
    for (const bad of [
      "",
      "not a url",
      "ftp://files.example.com",
      "http://localhost/",
      "http://10.0.0.1/",
      "https://user:pw@x.com",
      "mailto:a@b.com",
    ]) {
      expect(websiteHost(bad), bad).toBeNull();
    }
  });

  it("keeps the first URL of each host and every unusable entry", () => {
    const prepared = prepareUrls([
      "https://alpha.com/",
      "http://www.alpha.com/contact",
      "garbage",
      "beta.com",
      "garbage",
    ]);
    expect(prepared.rows).toEqual([
      { submittedUrl: "https://alpha.com/", host: "alpha.com" },
      { submittedUrl: "garbage", host: null },
      { submittedUrl: "beta.com", host: "beta.com" },
      { submittedUrl: "garbage", host: null },
    ]);
    expect(prepared).toMatchObject({ submitted: 5, duplicatesRemoved: 1, skippedInvalid: 2, uniqueHosts: 2 });
  });
});

describe("crawlSite", () => {
  const gate = new HostGate(0);

  it("reads the home page, then the linked contact page", async () => {
    sites.add("austin-hvac.test", {
      "/": homePage({ name: "Austin HVAC", links: '<a href="/contact-us">Contact</a>' }),
      "/contact-us": homePage({
        name: "Austin HVAC",
        footer:
          '<a href="tel:5124723391">512-472-3391</a> <a href="mailto:service@austin-hvac.test">mail</a>',
      }),
    });
    const result = await crawlSite(outbound, gate, sites.url("austin-hvac.test"), options);
    expect(result).toEqual({
      ok: true,
      contacts: {
        website: sites.url("austin-hvac.test"),
        companyName: "Austin HVAC",
        emails: ["service@austin-hvac.test"],
        phones: ["(512) 472-3391"],
        pages: [sites.url("austin-hvac.test"), sites.url("austin-hvac.test", "/contact-us")],
      },
    });
    expect(sites.hits("austin-hvac.test")).toEqual(["/robots.txt", "/", "/contact-us"]);
  });

  it("honours robots.txt: a disallowed site is not read, a disallowed page is skipped", async () => {
    sites.add("private-clinic.test", {
      "/robots.txt": "User-agent: LeadServiceBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
      "/": homePage({ name: "Clinic", footer: '<a href="tel:5124723391">call</a>' }),
    });
    expect(await crawlSite(outbound, gate, sites.url("private-clinic.test"), options)).toEqual({
      ok: false,
      reason: "disallowed by robots.txt",
    });
    expect(sites.hits("private-clinic.test")).toEqual(["/robots.txt"]);

    sites.add("half-open.test", {
      "/robots.txt": "User-agent: *\nDisallow: /contact\n",
      "/": homePage({
        name: "Half Open",
        links: '<a href="/contact">Contact</a>',
        footer: "<p>Call 512-472-3391</p>",
      }),
      "/contact": homePage({ name: "Half Open", footer: '<a href="mailto:secret@half-open.test">x</a>' }),
    });
    const result = await crawlSite(outbound, gate, sites.url("half-open.test"), options);
    expect(result.ok && result.contacts.emails).toEqual([]);
    expect(sites.hits("half-open.test")).toEqual(["/robots.txt", "/"]);
  });

  it("treats a robots.txt that fails with 5xx as disallow-all, and a 404 as allow-all", async () => {
    sites.add("flaky.test", {
      "/robots.txt": { status: 503, body: "busy" },
      "/": homePage({ name: "Flaky" }),
    });
    expect(await crawlSite(outbound, gate, sites.url("flaky.test"), options)).toEqual({
      ok: false,
      reason: "robots.txt answered HTTP 503",
    });
    sites.add("plain.test", { "/": homePage({ name: "Plain", footer: "<p>Phone: (512) 472-3391</p>" }) });
    const result = await crawlSite(outbound, gate, sites.url("plain.test"), options);
    expect(result.ok && result.contacts.phones).toEqual(["(512) 472-3391"]);
  });

  it("refuses a redirect to a private address without reaching it", async () => {
    sites.add("sneaky.test", { "/": { location: `http://internal.test:${sites.port}/admin` } });
    sites.add("internal.test", {
      "/admin": homePage({ name: "Admin", footer: '<a href="tel:5124723391">x</a>' }),
    });
    const result = await crawlSite(outbound, gate, sites.url("sneaky.test"), options);
    expect(result).toEqual({
      ok: false,
      reason: "refused: internal.test resolves to 127.0.0.2, a private or reserved address",
    });
    expect(sites.hits("internal.test")).toEqual([]);
  });

  it("follows redirects between public hosts and reports error pages and non-HTML as failures", async () => {
    sites.add("old-name.test", { "/": { location: `http://new-name.test:${sites.port}/` } });
    sites.add("new-name.test", { "/": homePage({ name: "New Name", footer: "<p>hello@new-name.test</p>" }) });
    const moved = await crawlSite(outbound, gate, sites.url("old-name.test"), options);
    expect(moved.ok && moved.contacts.website).toBe(sites.url("new-name.test"));
    expect(moved.ok && moved.contacts.emails).toEqual(["hello@new-name.test"]);

    sites.add("gone.test", { "/": { status: 410, body: "gone" } });
    expect(await crawlSite(outbound, gate, sites.url("gone.test"), options)).toEqual({
      ok: false,
      reason: "HTTP 410",
    });
    sites.add("pdf.test", { "/": { body: "%PDF-1.7", contentType: "application/pdf" } });
    expect(await crawlSite(outbound, gate, sites.url("pdf.test"), options)).toEqual({
      ok: false,
      reason: "not a web page",
    });
  });

  it("waits the politeness delay between pages of one host", async () => {
    sites.add("slowpoke.test", {
      "/": homePage({ name: "Slowpoke", links: '<a href="/contact">Contact</a> <a href="/about">About</a>' }),
      "/contact": homePage({ name: "Slowpoke" }),
      "/about": homePage({ name: "Slowpoke" }),
    });
    const started = Date.now();
    const result = await crawlSite(outbound, new HostGate(150), sites.url("slowpoke.test"), options);
    expect(result.ok).toBe(true);
    // robots.txt, home, contact, about: three waits of 150 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(440);
  });
});
