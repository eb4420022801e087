import type { Caller } from "../http/contract.js";

/**
 * The channel a search or export records (`exportMethod` of the lead export history and of the
 * export history's files): `dashboard` for a signed-in session, `api` for a key (REST and MCP,
 * as the contract says).
 */
export type DeliveryChannel = "dashboard" | "api";

export function exportMethodOf(caller: Caller): DeliveryChannel {
  return caller.channel === "dashboard" ? "dashboard" : "api";
}

/** A stored job input's channel: `api` for inputs stored before the channel was recorded. */
export function parseDeliveryChannel(raw: unknown): DeliveryChannel {
  return raw === "dashboard" ? "dashboard" : "api";
}
