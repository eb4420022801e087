import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { Ajv2020 } from "ajv/dist/2020.js";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import type { TestApp } from "./app.js";
import { uniqueWord } from "./leads-factories.js";

/** One request a receiver got. */
export interface ReceivedDelivery {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  event: { id: string; type: string; integrationId: number; userId: number; data: Record<string, unknown> };
}

/** How the receiver answers a request (the default: 200 `ok`). */
export type ReceiverAnswer = {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Answers this many milliseconds after the request arrived. */
  delayMs?: number;
};

/**
 * A local webhook receiver: records every request (raw body and headers), answers with the
 * queued answers in order and then 200.
 */
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

export async function startReceiver(): Promise<{
  url: (path?: string) => string;
  received: ReceivedDelivery[];
  answers: ReceiverAnswer[];
  /** The requests received at one path (each test uses its own path). */
  at(path: string): ReceivedDelivery[];
  /** Waits until `count` requests arrived at `path`. */
  waitForAt(path: string, count: number, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}> {
  const received: ReceivedDelivery[] = [];
  const answers: ReceiverAnswer[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      received.push({ path: req.url ?? "", headers: req.headers, rawBody, event: JSON.parse(rawBody) });
      const answer = answers.shift() ?? { status: 200, body: "ok" };
      const send = () => {
        res.writeHead(answer.status, answer.headers ?? {});
        res.end(answer.body ?? "");
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
    received,
    answers,
    at: (path) => received.filter((r) => r.path === path),
    async waitForAt(path, count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      const at = () => received.filter((r) => r.path === path);
      while (at().length < count) {
        if (Date.now() > deadline) throw new Error(`${path} got ${at().length} of ${count} deliveries`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return at();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const stripe = new Stripe("sk_test_verifier");

/**
 * Verifies a delivery with an independent implementation of the signature scheme: the official
 * `stripe` package's `webhooks.constructEvent` checks `t=<unix>,v1=<hex HMAC-SHA256 of
 * "<t>." + raw body>` within 5 minutes. Throws when the signature does not match.
 */
export function verifyDelivery(delivery: ReceivedDelivery, secret: string): void {
  const header = delivery.headers["x-svc-signature"];
  if (typeof header !== "string") throw new Error("no X-SVC-Signature header");
  stripe.webhooks.constructEvent(delivery.rawBody, header, secret, 300);
  const t = /^t=(\d+),/.exec(header)?.[1];
  if (t !== delivery.headers["x-svc-timestamp"]) throw new Error("t differs from X-SVC-Timestamp");
}

let validateEvent: ((value: unknown) => boolean) & { errors?: unknown } = undefined as never;

/** Checks an event against the contract's `webhooks` (openapi.yaml, one per event type); throws when it does not match. */
export function expectContractEvent(event: unknown): void {
  if (!validateEvent) {
    const spec = parse(readFileSync("openapi.yaml", "utf8")) as {
      components: unknown;
      webhooks: Record<
        string,
        { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }
      >;
    };
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: "spec", components: spec.components } as object);
    const events = Object.values(spec.webhooks).map((w) => ({
      $ref: `spec${w.post.requestBody.content["application/json"]!.schema.$ref}`,
    }));
    validateEvent = ajv.compile({ oneOf: events });
  }
  if (!validateEvent(event)) {
    throw new Error(`event does not match the contract's webhooks: ${JSON.stringify(validateEvent.errors)}`);
  }
}

/** Creates a generic webhook integration of `events` pointing at a fresh path of the receiver. */
export async function createWebhook(
  t: TestApp,
  receiver: Receiver,
  auth: { Authorization: string },
  events: string[],
  extra: object = {},
): Promise<{ id: number; secret: string; path: string }> {
  const path = `/${uniqueWord("h")}`;
  const res = await t
    .request()
    .post("/api/v1/integrations/webhook")
    .set(auth)
    .send({
      provider: "generic_webhook",
      displayName: "Hook",
      targetUrl: receiver.url(path),
      events,
      ...extra,
    })
    .expect(201);
  return { id: res.body.data.integration.id as number, secret: res.body.data.signingSecret as string, path };
}
