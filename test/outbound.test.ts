import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import {
  describeFailure,
  isRefusedAddress,
  Outbound,
  OutboundRefusedError,
  type PostResult,
  type Resolver,
} from "../src/outbound/index.js";

// Outbound requests against real HTTP servers on 127.0.0.1 started here (no real network): what
// a delivery sees of a receiver, and what the guard refuses before anything is sent.

interface Received {
  method: string;
  url: string;
  rawHeaders: string[];
  headers: IncomingMessage["headers"];
  body: Buffer;
}

interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** TCP connections accepted so far (keep-alive reuse shows as fewer connections than requests). */
  connections: () => number;
}

const servers: { close: () => void }[] = [];
const outbounds: Outbound[] = [];

/** A local receiver: `answer` runs after the request body has been read (it may never answer). */
async function receiver(answer: (res: ServerResponse, req: Received) => void): Promise<Receiver> {
  const received: Received[] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const entry = {
        method: req.method ?? "",
        url: req.url ?? "",
        rawHeaders: req.rawHeaders,
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      received.push(entry);
      answer(res, entry);
    });
  });
  server.on("connection", () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push({
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook?x=1`, port, received, connections: () => connections };
}

function outbound(allowPrivate: boolean, resolve?: Resolver): Outbound {
  const made = new Outbound(resolve ? { allowPrivate, resolve } : { allowPrivate });
  outbounds.push(made);
  return made;
}

const post = (out: Outbound, url: string, extra: { timeoutMs?: number; signal?: AbortSignal } = {}) =>
  out.post(url, { body: '{"hello":"world"}', headers: { "Content-Type": "application/json" }, ...extra });

afterAll(() => {
  for (const out of outbounds) out.close();
  for (const server of servers) server.close();
});

/** A documentation address (TEST-NET-3 is refused, so a real public one that is never connected to). */
const PUBLIC_ADDRESS = "93.184.215.14";

describe("outbound POST to a local receiver (OUTBOUND_ALLOW_PRIVATE)", () => {
  const out = outbound(true);

  it("succeeds on 2xx", async () => {
    const target = await receiver((res) => res.writeHead(204).end());
    const result = await post(out, target.url);
    expect(result).toMatchObject({
      ok: true,
      statusCode: 204,
      responseBody: "",
      retryAfterSeconds: null,
      error: null,
    });
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(describeFailure(result)).toBeNull();
    expect(target.received[0]).toMatchObject({ method: "POST", url: "/hook?x=1" });
  });

  it("sends headers and body byte for byte", async () => {
    const target = await receiver((res) => res.writeHead(200).end("ok"));
    const body = Buffer.from([0x00, 0xff, 0x7b, 0x0a, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0x0d, 0x0a]);
    const headers = {
      "Content-Type": "application/json; charset=utf-8",
      "X-SVC-Signature": "t=1700000000,v1=abc123",
      "X-SVC-Event-Id": "evt_1_a",
    };
    const result = await out.post(target.url, { body, headers });
    expect(result.ok).toBe(true);
    const got = target.received[0]!;
    expect(got.body.equals(body)).toBe(true);
    expect(got.headers["content-length"]).toBe(String(body.length));
    for (const [name, value] of Object.entries(headers)) {
      const at = got.rawHeaders.indexOf(name);
      expect(at, name).toBeGreaterThanOrEqual(0);
      expect(got.rawHeaders[at + 1]).toBe(value);
    }
    const text = "héllo €";
    await out.post(target.url, { body: text, headers: {} });
    expect(target.received[1]!.body.toString("utf8")).toBe(text);
  });

  it("keeps the first 1,000 characters of a non-2xx answer; describeFailure the first 500", async () => {
    const answer = "é".repeat(600) + "x".repeat(2_000);
    const target = await receiver((res) => res.writeHead(422, { "Content-Type": "text/plain" }).end(answer));
    const result = await post(out, target.url);
    expect(result).toMatchObject({ ok: false, statusCode: 422, error: null });
    expect(result.responseBody).toBe(answer.slice(0, 1_000));
    expect(describeFailure(result)).toBe(answer.slice(0, 500));
  });

  it("describes an empty non-2xx answer as HTTP <status>", async () => {
    const target = await receiver((res) => res.writeHead(500).end());
    const result = await post(out, target.url);
    expect(result).toMatchObject({ ok: false, statusCode: 500, responseBody: "", error: null });
    expect(describeFailure(result)).toBe("HTTP 500");
  });

  it("does not follow a redirect", async () => {
    const elsewhere = await receiver((res) => res.writeHead(200).end());
    const target = await receiver((res) => res.writeHead(302, { Location: elsewhere.url }).end());
    const result = await post(out, target.url);
    expect(result).toMatchObject({ ok: false, statusCode: 302, error: null });
    expect(describeFailure(result)).toBe("HTTP 302");
    expect(elsewhere.received).toHaveLength(0);
  });

  it("times out when the receiver never answers", async () => {
    const target = await receiver(() => undefined);
    const result = await post(out, target.url, { timeoutMs: 300 });
    expect(result).toMatchObject({
      ok: false,
      statusCode: null,
      responseBody: null,
      error: "timed out after 0.3 s",
    });
    expect(result.latencyMs).toBeGreaterThanOrEqual(290);
    expect(result.latencyMs).toBeLessThan(2_000);
    expect(describeFailure(result)).toBe("timed out after 0.3 s");
  });

  it("times out when the answer's body never ends (the limit covers reading it)", async () => {
    const target = await receiver((res) => {
      res.writeHead(200, { "Content-Length": "100" });
      res.write("partial");
    });
    const result = await post(out, target.url, { timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, statusCode: null, error: "timed out after 0.3 s" });
  });

  it("reports a refused connection", async () => {
    const closed = await receiver(() => undefined);
    servers.pop()?.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const result = await post(out, `http://127.0.0.1:${closed.port}/`);
    expect(result).toMatchObject({ ok: false, statusCode: null, error: "connection refused" });
  });

  it("stops when the caller aborts", async () => {
    const target = await receiver(() => undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const result = await post(out, target.url, { signal: controller.signal });
    expect(result).toMatchObject({ ok: false, statusCode: null, error: "aborted" });
  });

  it("does not throw on a header value Node refuses to send", async () => {
    const target = await receiver((res) => res.writeHead(200).end());
    const result = await out.post(target.url, { body: "{}", headers: { "X-SVC-API-Key": "a\r\nb" } });
    expect(result).toMatchObject({ ok: false, statusCode: null, error: "invalid request header" });
    expect(target.received).toHaveLength(0);
  });

  it("reads Retry-After as seconds or as an HTTP-date", async () => {
    const values = ["120", new Date(Date.now() + 60_000).toUTCString(), "soon", "-5", undefined];
    const target = await receiver((res) => {
      const value = values[target.received.length - 1];
      res.writeHead(503, value === undefined ? {} : { "Retry-After": value }).end();
    });
    const seconds: (number | null)[] = [];
    for (let i = 0; i < values.length; i += 1) seconds.push((await post(out, target.url)).retryAfterSeconds);
    expect(seconds[0]).toBe(120);
    expect(seconds[1]).toBeGreaterThanOrEqual(58);
    expect(seconds[1]).toBeLessThanOrEqual(61);
    expect(seconds.slice(2)).toEqual([null, null, null]);
  });

  it("reuses a connection after a complete answer, not after one cut off", async () => {
    const huge = "y".repeat(2_000_000);
    const target = await receiver((res, req) =>
      res.writeHead(400).end(req.body.toString() === "big" ? huge : "no"),
    );
    const fresh = outbound(true);
    // A connection is free again one event-loop turn after its answer (undici's rule).
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    await fresh.post(target.url, { body: "small", headers: {} });
    await turn();
    await fresh.post(target.url, { body: "small", headers: {} });
    expect(target.connections()).toBe(1);
    await turn();
    const cut = await fresh.post(target.url, { body: "big", headers: {} });
    expect(cut.responseBody).toBe(huge.slice(0, 1_000));
    const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
    await pause();
    await fresh.post(target.url, { body: "small", headers: {} });
    const afterCut = target.connections();
    expect(afterCut).toBeGreaterThan(1);
    // The new connection is kept in turn.
    await pause();
    await fresh.post(target.url, { body: "small", headers: {} });
    expect(target.connections()).toBe(afterCut);
  });

  it("retries once on a new connection when a reused one turns out closed", async () => {
    const served = new WeakMap<object, number>();
    const target = await receiver((res) => {
      const socket = res.socket!;
      const count = (served.get(socket) ?? 0) + 1;
      served.set(socket, count);
      // The second request on a connection finds it closed, as when a receiver's idle timeout fires.
      if (count === 2) socket.destroy();
      else res.writeHead(200).end();
    });
    const fresh = outbound(true);
    expect((await post(fresh, target.url)).ok).toBe(true);
    const again = await post(fresh, target.url);
    expect(again).toMatchObject({ ok: true, statusCode: 200 });
    expect(target.connections()).toBe(2);
  });

  it("reaches a name that resolves to a private address", async () => {
    const target = await receiver((res) => res.writeHead(200).end());
    const viaName = outbound(true, async () => ["127.0.0.1"]);
    await expect(viaName.checkDestination(`http://receiver.test:${target.port}/`)).resolves.toBeUndefined();
    expect((await post(viaName, `http://receiver.test:${target.port}/`)).ok).toBe(true);
  });
});

describe("the outbound guard (OUTBOUND_ALLOW_PRIVATE off)", () => {
  const refuse = async (out: Outbound, url: string): Promise<PostResult> => {
    await expect(out.checkDestination(url)).rejects.toBeInstanceOf(OutboundRefusedError);
    const result = await post(out, url);
    expect(result).toMatchObject({ ok: false, statusCode: null, responseBody: null });
    expect(result.error).toMatch(/^refused: /);
    return result;
  };

  it("refuses private, loopback, link-local, CGNAT and metadata literals without connecting", async () => {
    const target = await receiver((res) => res.writeHead(200).end());
    const out = outbound(false);
    for (const host of [
      "127.0.0.1",
      "[::1]",
      "10.1.2.3",
      "169.254.169.254",
      "100.64.0.1",
      "[::ffff:127.0.0.1]",
      "0.0.0.0",
      "0x7f.1",
      "[fd00:ec2::254]",
    ]) {
      await refuse(out, `http://${host}:${target.port}/hook`);
    }
    expect(target.received).toHaveLength(0);
  });

  it("refuses localhost, which resolves to loopback", async () => {
    const target = await receiver((res) => res.writeHead(200).end());
    const result = await refuse(outbound(false), `http://localhost:${target.port}/`);
    expect(result.error).toMatch(/^refused: localhost resolves to /);
    expect(target.received).toHaveLength(0);
  });

  it("refuses at send time a name that resolved to a public address when saved (DNS rebinding)", async () => {
    const target = await receiver((res) => res.writeHead(200).end());
    let lookups = 0;
    const rebinding = outbound(false, async () => (lookups++ === 0 ? [PUBLIC_ADDRESS] : ["127.0.0.1"]));
    const url = `http://rebind.test:${target.port}/hook`;
    await expect(rebinding.checkDestination(url)).resolves.toBeUndefined();
    const result = await post(rebinding, url);
    expect(result).toMatchObject({ ok: false, statusCode: null });
    expect(result.error).toBe("refused: rebind.test resolves to 127.0.0.1, a private or reserved address");
    expect(lookups).toBe(2);
    expect(target.received).toHaveLength(0);
  });

  it("refuses a name with one public and one private address", async () => {
    const target = await receiver((res) => res.writeHead(200).end());
    const mixed = outbound(false, async () => [PUBLIC_ADDRESS, "10.0.0.5"]);
    const result = await refuse(mixed, `http://mixed.test:${target.port}/`);
    expect(result.error).toContain("10.0.0.5");
    expect(target.received).toHaveLength(0);
  });

  it("refuses a name that does not resolve", async () => {
    const nowhere = outbound(false, async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND nowhere.test"), { code: "ENOTFOUND" });
    });
    await expect(nowhere.checkDestination("https://nowhere.test/")).rejects.toThrow(
      "nowhere.test does not resolve",
    );
    expect((await post(nowhere, "https://nowhere.test/")).error).toBe("host not found");
    const empty = outbound(false, async () => []);
    await expect(empty.checkDestination("https://empty.test/")).rejects.toBeInstanceOf(OutboundRefusedError);
  });

  it("accepts a name whose addresses are all public (checked, never connected to)", async () => {
    const out = outbound(false, async () => [PUBLIC_ADDRESS, "2606:4700::1111"]);
    await expect(out.checkDestination("https://hooks.example.com/in")).resolves.toBeUndefined();
    await expect(out.checkDestination("https://8.8.8.8/in")).resolves.toBeUndefined();
  });

  it("refuses other schemes and URLs with credentials, whatever the setting", async () => {
    for (const allowPrivate of [false, true]) {
      const out = outbound(allowPrivate, async () => [PUBLIC_ADDRESS]);
      for (const url of [
        "file:///etc/passwd",
        "ftp://files.example.com/x",
        "http://user:pass@hooks.example.com/",
        "http://user@hooks.example.com/",
        "not a url",
      ]) {
        await expect(out.checkDestination(url), url).rejects.toBeInstanceOf(OutboundRefusedError);
        expect((await post(out, url)).error, url).toMatch(/^refused: /);
      }
    }
    await expect(outbound(true).checkDestination("http://127.0.0.1:1/")).resolves.toBeUndefined();
  });
});

describe("isRefusedAddress", () => {
  const refused = [
    "0.0.0.0",
    "0.1.2.3",
    "10.0.0.1",
    "100.64.0.1",
    "100.127.255.254",
    "127.0.0.1",
    "127.255.255.255",
    "169.254.169.254",
    "172.16.0.1",
    "172.31.255.255",
    "192.0.0.8",
    "192.0.2.1",
    "192.168.1.1",
    "198.18.0.1",
    "198.19.255.255",
    "198.51.100.7",
    "203.0.113.9",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fc00::1",
    "fd00:ec2::254",
    "fe80::1",
    "fe80::1%eth0",
    "febf::1",
    "fec0::1",
    "ff02::1",
    "2001:db8::1",
    "64:ff9b::7f00:1",
    "64:ff9b::808:808",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:a9fe:a9fe",
    "::127.0.0.1",
    "::ffff:0:7f00:1",
    "",
    "localhost",
    "1.2.3",
    "256.1.1.1",
    "010.0.0.1",
    "::ffff:999.0.0.1",
    "[::1]",
  ];
  const allowed = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.0.1.1",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "2606:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "::ffff:808:808",
  ];

  it.each(refused)("refuses %s", (ip) => expect(isRefusedAddress(ip)).toBe(true));
  it.each(allowed)("allows %s", (ip) => expect(isRefusedAddress(ip)).toBe(false));
});
