import type { Caller } from "../http/contract.js";
import type { LongRunningCall } from "../jobs/index.js";

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

/**
 * The request as the job protocol sees it, with the channel of a session in its query: a file
 * job records its channel, so a session's request never joins a key's identical one (nor the
 * reverse). `query` adds to the request's own.
 */
export function channelScopedCall(
  request: LongRunningCall & { caller: Caller },
  query: Record<string, unknown> = {},
): LongRunningCall {
  const channel = exportMethodOf(request.caller) === "dashboard" ? { via: "dashboard" } : {};
  return {
    operation: request.operation,
    query: { ...(request.query as Record<string, unknown>), ...query, ...channel },
    body: request.body,
    http: request.http,
  };
}
