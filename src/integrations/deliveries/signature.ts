import { createHmac } from "node:crypto";

/** `User-Agent` of every delivery. */
export const DELIVERY_USER_AGENT = "Service-Webhooks/1.0";

/**
 * `X-SVC-Signature` of a body signed at `unixSeconds`: `t=<unix>,v1=<hex HMAC-SHA256 of
 * "<t>." + raw body>`, keyed with the signing secret string as given (not decoded).
 */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const v1 = createHmac("sha256", secret).update(`${unixSeconds}.`).update(body).digest("hex");
  return `t=${unixSeconds},v1=${v1}`;
}

/** What a signed delivery attempt sends besides the body. */
export interface DeliveryHeaderInput {
  eventType: string;
  secret: string;
  body: string;
  /** The destination's header API key, when it was set for this destination. */
  apiKey: string | null;
  now?: Date;
}

/** The document's delivery headers, signed afresh for this attempt. */
export function deliveryHeaders(input: DeliveryHeaderInput): Record<string, string> {
  const t = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "User-Agent": DELIVERY_USER_AGENT,
    "X-SVC-Event": input.eventType,
    "X-SVC-Timestamp": String(t),
    "X-SVC-Signature": signatureHeader(input.secret, input.body, t),
  };
  if (input.apiKey !== null) headers["X-SVC-API-Key"] = input.apiKey;
  return headers;
}
