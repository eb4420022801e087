import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { api } from "./harness.js";

// A local webhook receiver for the fault scenarios: it verifies every delivery's signature
// (docs/integrations.md: `X-SVC-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>." + raw body>`
// keyed with the integration's signing secret) and counts deliveries by event id.

export interface ReceivedEvents {
  /** Deliveries received (every attempt that reached it). */
  requests: number;
  /** Distinct event ids received. */
  events: Map<
    string,
    { count: number; type: string; leadId: number | null; path: string; firstAt: number; at: number[] }
  >;
  /** Deliveries whose signature did not verify. */
  badSignatures: number;
}

export interface Receiver {
  url(path: string): string;
  /** The signing secret of the hook at `path` (from the integration's creation). */
  setSecret(path: string, secret: string): void;
  received: ReceivedEvents;
  /** How it answers: 200 by default; `hang` never answers (the sender's timeout ends it). */
  answer: (path: string) => { status: number; delayMs?: number; hang?: boolean };
  close(): Promise<void>;
}

function verifies(secret: string, header: string | undefined, body: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? "");
  if (!match) return false;
  const expected = createHmac("sha256", secret).update(`${match[1]}.`).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, "hex"));
}

export async function startReceiver(): Promise<Receiver> {
  const secrets = new Map<string, string>();
  const received: ReceivedEvents = { requests: 0, events: new Map(), badSignatures: 0 };
  const receiver = {} as Receiver;
  receiver.answer = () => ({ status: 200 });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const path = req.url ?? "";
      const now = Date.now();
      received.requests += 1;
      const secret = secrets.get(path);
      const signature = req.headers["x-svc-signature"];
      if (!secret || !verifies(secret, typeof signature === "string" ? signature : undefined, raw)) {
        received.badSignatures += 1;
      }
      try {
        const event = JSON.parse(raw) as { id: string; type: string; data?: { id?: number } };
        const seen = received.events.get(event.id);
        if (seen) {
          seen.count += 1;
          seen.at.push(now);
        } else {
          received.events.set(event.id, {
            count: 1,
            type: event.type,
            leadId: typeof event.data?.id === "number" ? event.data.id : null,
            path,
            firstAt: now,
            at: [now],
          });
        }
      } catch {
        received.badSignatures += 1;
      }
      const answer = receiver.answer(path);
      if (answer.hang) return;
      const send = () => {
        res.writeHead(answer.status);
        res.end("ok");
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(receiver, {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    setSecret: (path: string, secret: string) => void secrets.set(path, secret),
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** A webhook integration of the account subscribed to `events`, at `receiver.url(path)`. */
export async function createWebhook(
  base: string,
  key: string,
  receiver: Receiver,
  path: string,
  events: string[] = ["lead.created"],
): Promise<number> {
  const res = await api(base, key, "POST", "/integrations/webhook", {
    provider: "generic_webhook",
    displayName: `faults ${path}`,
    targetUrl: receiver.url(path),
    events,
  });
  const data = res.body.data as { integration: { id: number }; signingSecret: string } | undefined;
  if (res.status !== 201 || !data)
    throw new Error(`creating a webhook answered ${res.status}: ${JSON.stringify(res.body)}`);
  receiver.setSecret(path, data.signingSecret);
  return data.integration.id;
}
