import type { Caller } from "../http/contract.js";
import type { LongRunningCall } from "../jobs/index.js";
import { exportMethodOf } from "../leads/delivery-channel.js";

/**
 * The request as the job protocol sees it, with the channel of a session in its query: a file
 * job records its channel (src/leads/delivery-channel.ts), so a session's request never joins a
 * key's identical one (nor the reverse). `query` adds to the request's own.
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
