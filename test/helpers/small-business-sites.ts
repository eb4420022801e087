import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

// Local websites of small businesses for the enrichment crawler: one HTTP server on 127.0.0.1
// answering for many host names (by the Host header), each site with its pages, robots.txt and
// redirects, and a log of what was requested. Outbound connections reach it through a resolver
// stub that maps every host name to 127.0.0.1.

/** One page of a site: HTML (200) unless told otherwise. */
export interface SitePage {
  status?: number;
  body?: string;
  contentType?: string;
  /** A redirect (`Location`), with `status` 301 unless told otherwise. */
  location?: string;
  /** Answer after this long. */
  delayMs?: number;
}

export type Site = Record<string, SitePage | string>;

export interface SmallBusinessSites {
  /** The port every site answers on. */
  port: number;
  /** `http://<host>:<port><path>`. */
  url(host: string, path?: string): string;
  /** Adds or replaces a site (paths such as `/`, `/contact`, `/robots.txt`). */
  add(host: string, site: Site): void;
  /** Paths requested of a host, in order. */
  hits(host: string): string[];
  /** Every request, as `host path`. */
  all(): string[];
  close(): Promise<void>;
}

export async function startSmallBusinessSites(host = "127.0.0.1"): Promise<SmallBusinessSites> {
  const sites = new Map<string, Site>();
  const log: string[] = [];
  const server: Server = createServer((req, res) => {
    const name = (req.headers.host ?? "").replace(/:\d+$/, "").toLowerCase();
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    log.push(`${name} ${path}`);
    const site = sites.get(name);
    const entry = site?.[path];
    if (!site || entry === undefined) {
      res.writeHead(404, { "content-type": "text/html" }).end("<h1>Not found</h1>");
      return;
    }
    const page: SitePage = typeof entry === "string" ? { body: entry } : entry;
    const answer = () => {
      if (page.location) {
        res.writeHead(page.status ?? 301, { location: page.location }).end();
        return;
      }
      const contentType =
        page.contentType ?? (path === "/robots.txt" ? "text/plain" : "text/html; charset=utf-8");
      res.writeHead(page.status ?? 200, { "content-type": contentType }).end(page.body ?? "");
    };
    if (page.delayMs) setTimeout(answer, page.delayMs);
    else answer();
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (name, path = "/") => `http://${name}:${port}${path}`,
    add: (name, site) => void sites.set(name, site),
    hits: (name) =>
      log.filter((line) => line.startsWith(`${name} `)).map((line) => line.slice(name.length + 1)),
    all: () => [...log],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A home page in the style of a small business site (nav, hero, footer with contact details). */
export function homePage(options: { name: string; footer?: string; head?: string; links?: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${options.name} | Family owned since 1998</title>
  <meta property="og:site_name" content="${options.name}">
  <link rel="stylesheet" href="/assets/site.css">
  ${options.head ?? ""}
  <script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);}</script>
</head>
<body>
  <header class="site-header">
    <a class="logo" href="/"><img src="/assets/logo@2x.png" alt="${options.name}"></a>
    <nav><a href="/">Home</a> <a href="/services">Services</a> ${options.links ?? ""}</nav>
  </header>
  <main>
    <section class="hero"><h1>${options.name}</h1><p>Serving Travis County with honest work and fair prices.</p>
      <a class="btn" href="/services">Our services</a></section>
    <section class="reviews"><blockquote>"Showed up on time and fixed it in an hour." - Maria G.</blockquote></section>
  </main>
  <footer>${options.footer ?? "<p>&copy; 2026 All rights reserved.</p>"}</footer>
</body>
</html>`;
}

/** JSON-LD of a local business. */
export function jsonLd(data: Record<string, unknown>): string {
  return `<script type="application/ld+json">${JSON.stringify({ "@context": "https://schema.org", ...data })}</script>`;
}

/** Cloudflare's e-mail protection of an address (`data-cfemail`). */
export function cloudflareProtected(email: string, key = 0x5a): string {
  const hex = (n: number) => n.toString(16).padStart(2, "0");
  const encoded = hex(key) + [...email].map((c) => hex(c.charCodeAt(0) ^ key)).join("");
  return `<a href="/cdn-cgi/l/email-protection" class="__cf_email__" data-cfemail="${encoded}">[email&#160;protected]</a>`;
}
