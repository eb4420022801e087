import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { closePageAgent, fetchPage, Outbound, PageFetchError, type Resolver } from "../src/outbound/index.js";

// Page reads against real HTTP servers on loopback addresses started here (no real network). A
// policy whose refused set spares 127.0.0.1 lets a local server play a public site while 127.0.0.2
// (a second loopback address, where another server really listens) plays a private one.

interface Site {
  origin: string;
  port: number;
  hits: string[];
}

const closers: (() => void)[] = [];
const outbounds: Outbound[] = [];

async function site(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  host = "127.0.0.1",
): Promise<Site> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  return { origin: `http://${host}:${port}`, port, hits };
}

/** Public: everything but 127.0.0.1 is refused (unless `allowPrivate`). */
function outbound(
  allowPrivate: boolean,
  resolve?: Resolver,
  refuses = (ip: string) => ip !== "127.0.0.1",
): Outbound {
  const made = new Outbound({ allowPrivate, refuses, ...(resolve ? { resolve } : {}) });
  outbounds.push(made);
  return made;
}

async function failureOf(promise: Promise<unknown>): Promise<PageFetchError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PageFetchError);
  return err as PageFetchError;
}

afterAll(async () => {
  for (const out of outbounds) {
    await closePageAgent(out);
    out.close();
  }
  for (const close of closers) close();
});

const HOME = `<!doctype html><html><head><title>Joe's Plumbing</title></head><body>
<a href="tel:+15125550142">(512) 555-0142</a></body></html>`;

describe("fetchPage", () => {
  it("reads a page with its status, content type and final URL", async () => {
    const shop = await site((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(HOME);
    });
    const page = await fetchPage(outbound(false), `${shop.origin}/`);
    expect(page).toEqual({
      finalUrl: `${shop.origin}/`,
      status: 200,
      contentType: "text/html; charset=utf-8",
      body: HOME,
    });
  });

  it("returns error pages as pages and sends a browser-like user agent", async () => {
    let agent: string | undefined;
    const shop = await site((req, res) => {
      agent = req.headers["user-agent"];
      res.writeHead(404, { "content-type": "text/html" });
      res.end("<h1>Not found</h1>");
    });
    const page = await fetchPage(outbound(false), `${shop.origin}/contact`, { userAgent: "TestBot/2" });
    expect(page.status).toBe(404);
    expect(page.body).toBe("<h1>Not found</h1>");
    expect(agent).toBe("TestBot/2");
  });

  it("follows relative and absolute redirects to allowed addresses", async () => {
    const shop = await site((req, res) => {
      if (req.url === "/") res.writeHead(301, { location: "/home" }).end();
      else if (req.url === "/home")
        res.writeHead(302, { location: `http://shop.test:${shop.port}/final?x=1` }).end();
      else res.writeHead(200, { "content-type": "text/plain" }).end("done");
    });
    const out = outbound(false, async (host) => (host === "shop.test" ? ["127.0.0.1"] : []));
    const page = await fetchPage(out, `${shop.origin}/`);
    expect(page.finalUrl).toBe(`http://shop.test:${shop.port}/final?x=1`);
    expect(page.body).toBe("done");
    expect(shop.hits).toEqual(["/", "/home", "/final?x=1"]);
  });

  it("refuses a redirect to a private address literal without connecting to it", async () => {
    const inside = await site((_req, res) => res.end("secret"), "127.0.0.2");
    const shop = await site((_req, res) => res.writeHead(302, { location: `${inside.origin}/admin` }).end());
    const err = await failureOf(fetchPage(outbound(false), `${shop.origin}/`));
    expect(err.kind).toBe("refused");
    expect(err.reason).toContain("127.0.0.2");
    expect(inside.hits).toEqual([]);
  });

  it("refuses a redirect to a host name resolving to a private address, checked at connect time", async () => {
    const inside = await site((_req, res) => res.end("secret"), "127.0.0.2");
    const shop = await site((_req, res) =>
      res.writeHead(307, { location: `http://metadata.test:${inside.port}/latest` }).end(),
    );
    const out = outbound(false, async (host) => (host === "metadata.test" ? ["127.0.0.2"] : ["127.0.0.1"]));
    const err = await failureOf(fetchPage(out, `${shop.origin}/`));
    expect(err.kind).toBe("refused");
    expect(err.reason).toContain("metadata.test resolves to 127.0.0.2");
    expect(inside.hits).toEqual([]);
  });

  it("refuses loopback, link-local and metadata addresses with the real address ranges", async () => {
    const shop = await site((_req, res) => res.end("hi"));
    const strictDefault = new Outbound({ allowPrivate: false, resolve: async () => ["169.254.169.254"] });
    outbounds.push(strictDefault);
    for (const url of [`${shop.origin}/`, "http://[::1]/", "http://169.254.169.254/latest/meta-data"]) {
      expect((await failureOf(fetchPage(strictDefault, url))).kind).toBe("refused");
    }
    expect((await failureOf(fetchPage(strictDefault, "http://metadata.internal/"))).reason).toContain(
      "169.254.169.254",
    );
    expect(shop.hits).toEqual([]);
  });

  it("follows a redirect to a private address when OUTBOUND_ALLOW_PRIVATE is on", async () => {
    const inside = await site((_req, res) => res.end("inside"), "127.0.0.2");
    const shop = await site((_req, res) => res.writeHead(302, { location: `${inside.origin}/x` }).end());
    const page = await fetchPage(outbound(true), `${shop.origin}/`);
    expect(page.body).toBe("inside");
  });

  it("refuses redirects to other schemes and URLs with credentials", async () => {
    const shop = await site((req, res) => {
      const to = req.url === "/file" ? "file:///etc/passwd" : "http://user:pw@127.0.0.1/";
      res.writeHead(302, { location: to }).end();
    });
    const out = outbound(true);
    expect((await failureOf(fetchPage(out, `${shop.origin}/file`))).reason).toContain("only http and https");
    expect((await failureOf(fetchPage(out, `${shop.origin}/creds`))).reason).toContain(
      "user name or password",
    );
    expect((await failureOf(fetchPage(out, "ftp://example.com/"))).kind).toBe("refused");
    expect((await failureOf(fetchPage(out, "not a url"))).kind).toBe("refused");
  });

  it("stops after maxRedirects", async () => {
    const loop = await site((req, res) =>
      res.writeHead(302, { location: `/n${(req.url ?? "").length}` }).end(),
    );
    const err = await failureOf(fetchPage(outbound(false), `${loop.origin}/`, { maxRedirects: 3 }));
    expect(err.kind).toBe("too_many_redirects");
    expect(loop.hits).toHaveLength(4);
  });

  it("keeps at most maxBytes of a large page", async () => {
    let finished = false;
    const big = await site((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      const chunk = "x".repeat(64 * 1024);
      let sent = 0;
      const pump = () => {
        while (sent < 400) {
          sent += 1;
          if (!res.write(chunk)) return res.once("drain", pump);
        }
        finished = true;
        res.end();
      };
      res.on("close", () => undefined);
      pump();
    });
    const page = await fetchPage(outbound(false), `${big.origin}/`, { maxBytes: 100_000 });
    expect(page.body).toHaveLength(100_000);
    expect(finished).toBe(false);
  });

  it("times out a page that never answers, and ends on the caller's signal", async () => {
    const slow = await site(() => undefined);
    const started = Date.now();
    const err = await failureOf(fetchPage(outbound(false), `${slow.origin}/`, { timeoutMs: 300 }));
    expect(err.kind).toBe("timeout");
    expect(err.reason).toBe("timed out after 0.3 s");
    expect(Date.now() - started).toBeLessThan(3_000);

    const stop = new AbortController();
    setTimeout(() => stop.abort(), 100);
    expect(
      (await failureOf(fetchPage(outbound(false), `${slow.origin}/`, { signal: stop.signal }))).kind,
    ).toBe("aborted");
  });

  it("reports a closed port as a network failure", async () => {
    const gone = await site((_req, res) => res.end());
    closers.pop()?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const err = await failureOf(fetchPage(outbound(false), `${gone.origin}/`));
    expect(err.kind).toBe("network");
    expect(err.reason).toBe("connection refused");
  });

  it("decodes the declared charset of the header or a meta tag", async () => {
    const shop = await site((req, res) => {
      const text = Buffer.from("Café Olé", "latin1");
      if (req.url === "/header")
        res.writeHead(200, { "content-type": "text/plain; charset=ISO-8859-1" }).end(text);
      else
        res
          .writeHead(200, { "content-type": "text/html" })
          .end(Buffer.concat([Buffer.from('<meta charset="windows-1252">'), text]));
    });
    const out = outbound(false);
    expect((await fetchPage(out, `${shop.origin}/header`)).body).toBe("Café Olé");
    expect((await fetchPage(out, `${shop.origin}/meta`)).body).toBe('<meta charset="windows-1252">Café Olé');
  });
});
