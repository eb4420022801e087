import http from "node:http";
import https from "node:https";
import type { IncomingHttpHeaders } from "node:http";
import type { LookupFunction } from "node:net";
import { performance } from "node:perf_hooks";
import {
  checkLiteral,
  guardedLookup,
  parseTarget,
  resolveAllowed,
  systemResolver,
  type OutboundPolicy,
  type Resolver,
  type Target,
} from "./destination.js";
import { failureReason, firstChars, parseRetryAfter, type PostResult } from "./result.js";

export { OutboundRefusedError, type OutboundPolicy, type Resolver } from "./destination.js";
export { describeFailure, type PostResult } from "./result.js";

/** Deliveries give a receiver 8 seconds for the whole exchange (issue 12, "Deliveries"). */
const DEFAULT_TIMEOUT_MS = 8_000;
const DEFAULT_MAX_RESPONSE_CHARS = 1_000;
const DEFAULT_MAX_SOCKETS = 64;
/**
 * How long an idle keep-alive connection is kept: below the 5 s idle timeout of common servers
 * (Node's own included), so a reused connection is rarely one the receiver is just closing. A
 * receiver's `Keep-Alive: timeout=N` shortens it further.
 */
const IDLE_SOCKET_MS = 4_000;

/** One POST to send. */
export interface PostRequest {
  /** Sent byte for byte (a string as UTF-8). */
  body: string | Buffer;
  /** Sent as given; `Content-Length` is added when absent. */
  headers: Record<string, string>;
  /** The whole exchange, from resolving the name to the end of the answer. Default 8,000. */
  timeoutMs?: number;
  /** Characters of the answer kept in `responseBody`. Default 1,000. */
  maxResponseChars?: number;
  /** Aborts the attempt (for example when the worker stops): a failure "aborted". */
  signal?: AbortSignal;
}

/** How one connection attempt ended, before it becomes a `PostResult`. */
type Attempt =
  | { answered: true; statusCode: number; headers: IncomingHttpHeaders; body: Buffer }
  | { answered: false; error: unknown; reusedSocket: boolean };

/**
 * The one way the service sends HTTP to customer-supplied URLs (webhooks, and later CRMs,
 * enrichments and website reads), so the outbound guard and `OUTBOUND_ALLOW_PRIVATE` apply to all
 * of them alike. Private, loopback, link-local, CGNAT and metadata addresses are refused at the
 * moment of connecting, after resolution, through a `lookup` hook (see `guardedLookup`). Redirects
 * are never followed: a receiver cannot bounce a request to an internal address. Keep-alive agents
 * of its own let a burst of deliveries to one receiver reuse connections.
 */
export class Outbound {
  private readonly resolve: Resolver;
  private readonly lookup: LookupFunction;
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(
    /** What this instance may reach (read by `fetchPage`, which shares the guard). */
    readonly policy: OutboundPolicy,
    options: { maxSockets?: number } = {},
  ) {
    this.resolve = policy.resolve ?? systemResolver;
    this.lookup = guardedLookup(policy);
    const agentOptions = {
      keepAlive: true,
      maxSockets: options.maxSockets ?? DEFAULT_MAX_SOCKETS,
      timeout: IDLE_SOCKET_MS,
    };
    this.agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
  }

  /**
   * The check of a destination when it is saved: refuses (throws `OutboundRefusedError`) a URL that
   * is not http(s), carries a user name or password, names a refused address literal, or a host
   * name that does not resolve or any of whose addresses is refused. With `allowPrivate` only the
   * URL itself is checked. Passing this check is no licence: every attempt checks again.
   */
  async checkDestination(url: string): Promise<void> {
    const target = parseTarget(url);
    if (this.policy.allowPrivate) return;
    if (target.literal) checkLiteral(target);
    else await resolveAllowed(this.resolve, target.host);
  }

  /**
   * One POST. Never throws for network or HTTP problems: a refused destination, a timeout or a
   * failed connection give `ok: false` with `statusCode: null` and a short `error`, and nothing is
   * sent to a refused destination. A stale keep-alive connection the receiver closed just as it was
   * reused is retried once on a new one, within the same time limit.
   */
  async post(url: string, request: PostRequest): Promise<PostResult> {
    const started = performance.now();
    const latencyMs = () => Math.round(performance.now() - started);
    const failed = (error: string): PostResult => ({
      ok: false,
      statusCode: null,
      latencyMs: latencyMs(),
      responseBody: null,
      retryAfterSeconds: null,
      error,
    });
    let target: Target;
    try {
      target = parseTarget(url);
      if (!this.policy.allowPrivate) checkLiteral(target);
    } catch (err) {
      return failed(failureReason(err));
    }

    const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxChars = request.maxResponseChars ?? DEFAULT_MAX_RESPONSE_CHARS;
    // One timer for the whole exchange; the caller's signal ends it as well.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    const signal = request.signal ? AbortSignal.any([deadline.signal, request.signal]) : deadline.signal;
    const body = typeof request.body === "string" ? Buffer.from(request.body, "utf8") : request.body;
    try {
      let attempt = await this.attempt(target, request.headers, body, maxChars * 4, signal);
      if (!attempt.answered && attempt.reusedSocket && isReset(attempt.error) && !signal.aborted) {
        attempt = await this.attempt(target, request.headers, body, maxChars * 4, signal);
      }
      if (attempt.answered) {
        const status = attempt.statusCode;
        return {
          ok: status >= 200 && status < 300,
          statusCode: status,
          latencyMs: latencyMs(),
          responseBody: firstChars(attempt.body.toString("utf8"), maxChars),
          retryAfterSeconds: parseRetryAfter(headerValue(attempt.headers["retry-after"])),
          error: null,
        };
      }
      if (deadline.signal.aborted) return failed(`timed out after ${timeoutMs / 1000} s`);
      if (request.signal?.aborted) return failed("aborted");
      return failed(failureReason(attempt.error));
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the keep-alive connections (at shutdown; requests in flight are cut). */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /**
   * One request on one connection. At most `maxBytes` of the answer are read: a longer answer is
   * cut off and its connection closed, so a receiver cannot make the service buffer megabytes; an
   * answer read to its end leaves the connection to the agent for reuse.
   */
  private attempt(
    target: Target,
    headers: Record<string, string>,
    body: Buffer,
    maxBytes: number,
    signal: AbortSignal,
  ): Promise<Attempt> {
    return new Promise((resolve) => {
      let settled = false;
      const settle = (attempt: Attempt) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        resolve(attempt);
      };
      let req: http.ClientRequest | undefined;
      const onAbort = () => {
        settle({ answered: false, error: signal.reason, reusedSocket: false });
        req?.destroy();
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      const secure = target.url.protocol === "https:";
      try {
        req = (secure ? https : http).request({
          protocol: target.url.protocol,
          hostname: target.host,
          port: target.url.port || undefined,
          path: `${target.url.pathname}${target.url.search}`,
          method: "POST",
          headers: withContentLength(headers, body.length),
          agent: secure ? this.agents.https : this.agents.http,
          lookup: this.lookup,
        });
      } catch (error) {
        // Invalid header names or values (a customer-supplied API key with a line break).
        return settle({ answered: false, error, reusedSocket: false });
      }
      const sent = req;
      sent.on("error", (error) => settle({ answered: false, error, reusedSocket: sent.reusedSocket }));
      sent.on("response", (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const answered = () =>
          settle({
            answered: true,
            statusCode: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          });
        res.on("data", (chunk: Buffer) => {
          const room = maxBytes - size;
          if (room > 0) chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
          size += Math.min(room, chunk.length);
          if (size >= maxBytes) {
            answered();
            res.destroy();
          }
        });
        // A connection lost halfway through the answer still leaves its status: keep what arrived.
        res.on("end", answered);
        res.on("close", answered);
        res.on("error", answered);
      });
      sent.end(body);
    });
  }
}

function withContentLength(headers: Record<string, string>, length: number): Record<string, string> {
  const has = Object.keys(headers).some((name) => name.toLowerCase() === "content-length");
  return has ? headers : { ...headers, "Content-Length": String(length) };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function isReset(err: unknown): boolean {
  return err instanceof Error && "code" in err && (err.code === "ECONNRESET" || err.code === "EPIPE");
}
