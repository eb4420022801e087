import type { IncomingHttpHeaders } from "node:http";
import { performance } from "node:perf_hooks";
import type { Agent, Dispatcher } from "undici";
import {
  checkLiteral,
  guardedAgent,
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
/** Parsed destination URLs kept per instance (all are dropped when it is full). */
const PARSED_TARGETS_KEPT = 1_000;

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
 * are never followed: a receiver cannot bounce a request to an internal address. A keep-alive
 * undici agent of its own (`guardedAgent`) lets a burst of deliveries to one receiver reuse
 * connections.
 */
export class Outbound {
  private readonly resolve: Resolver;
  private readonly agent: Agent;
  /** URLs parsed lately: a burst of deliveries goes to few destinations. */
  private readonly targets = new Map<string, ParsedTarget>();

  constructor(
    /** What this instance may reach (read by `fetchPage`, which shares the guard). */
    readonly policy: OutboundPolicy,
    options: { maxSockets?: number } = {},
  ) {
    this.resolve = policy.resolve ?? systemResolver;
    // The exchange's own deadline (`timeoutMs`) bounds every phase.
    this.agent = guardedAgent(policy, options.maxSockets ?? DEFAULT_MAX_SOCKETS, {
      headersTimeout: 0,
      bodyTimeout: 0,
    });
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
    let target: ParsedTarget;
    try {
      target = this.parsed(url);
      if (!this.policy.allowPrivate) checkLiteral(target);
    } catch (err) {
      return failed(failureReason(err));
    }

    const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxChars = request.maxResponseChars ?? DEFAULT_MAX_RESPONSE_CHARS;
    // One timer for the whole exchange; the caller's signal ends it as well.
    const exchange: Exchange = { timedOut: false, aborted: false, current: undefined };
    const stop = (why: "timedOut" | "aborted") => {
      exchange[why] = true;
      exchange.current?.abort(new Error(why));
    };
    const timer = setTimeout(() => stop("timedOut"), timeoutMs);
    const onAbort = () => stop("aborted");
    if (request.signal?.aborted) exchange.aborted = true;
    else request.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      let attempt = await this.attempt(target, request, maxChars * 4, exchange);
      if (!attempt.answered && attempt.reusedSocket && isReset(attempt.error) && !isStopped(exchange)) {
        attempt = await this.attempt(target, request, maxChars * 4, exchange);
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
      if (exchange.timedOut) return failed(`timed out after ${timeoutMs / 1000} s`);
      if (exchange.aborted) return failed("aborted");
      return failed(failureReason(attempt.error));
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** `parseTarget` (throws for a refused URL), kept for the next attempts to the same URL. */
  private parsed(url: string): ParsedTarget {
    const known = this.targets.get(url);
    if (known) return known;
    const target = parseTarget(url);
    const parsed = {
      ...target,
      origin: target.url.origin,
      path: `${target.url.pathname}${target.url.search}`,
    };
    if (this.targets.size >= PARSED_TARGETS_KEPT) this.targets.clear();
    this.targets.set(url, parsed);
    return parsed;
  }

  /** Closes the keep-alive connections (at shutdown; requests in flight are cut). */
  close(): void {
    this.agent.destroy().catch(() => undefined);
  }

  /**
   * One request on one connection (undici's dispatch, without streams). At most `maxBytes` of the
   * answer are read: a longer answer is cut off and its connection closed, so a receiver cannot
   * make the service buffer megabytes; an answer read to its end leaves the connection for reuse.
   */
  private attempt(
    target: ParsedTarget,
    request: PostRequest,
    maxBytes: number,
    exchange: Exchange,
  ): Promise<Attempt> {
    return new Promise((resolve) => {
      if (isStopped(exchange)) {
        resolve({ answered: false, error: new Error("stopped"), reusedSocket: false });
        return;
      }
      let settled = false;
      let statusCode = 0;
      let headers: IncomingHttpHeaders = {};
      let answered = false;
      const chunks: Buffer[] = [];
      let size = 0;
      const settle = (attempt: Attempt) => {
        if (settled) return;
        settled = true;
        exchange.current = undefined;
        resolve(attempt);
      };
      const answer = () => settle({ answered: true, statusCode, headers, body: Buffer.concat(chunks, size) });
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(controller) {
          exchange.current = controller;
        },
        onResponseStart(_controller, status, responseHeaders) {
          if (status < 200) return;
          statusCode = status;
          headers = responseHeaders;
          answered = true;
        },
        onResponseData(controller, chunk) {
          const room = maxBytes - size;
          if (room > 0) chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
          size += Math.min(room, chunk.length);
          if (size >= maxBytes) {
            answer();
            controller.abort(new Error("answer cut off"));
          }
        },
        onResponseEnd() {
          answer();
        },
        onResponseError(_controller, error) {
          // A connection lost halfway through the answer still leaves its status: keep what arrived
          // (not when the deadline or the caller ended the exchange).
          if (answered && !isStopped(exchange)) answer();
          else settle({ answered: false, error, reusedSocket: wasReused(error) });
        },
      };
      try {
        this.agent.dispatch(
          {
            origin: target.origin,
            path: target.path,
            method: "POST",
            headers: request.headers,
            body: request.body,
          },
          handler,
        );
      } catch (error) {
        // Invalid header names or values (a customer-supplied API key with a line break).
        settle({ answered: false, error, reusedSocket: false });
      }
    });
  }
}

/** A destination as sent to: its origin and path worked out once. */
interface ParsedTarget extends Target {
  origin: string;
  path: string;
}

/** The state of one exchange (its attempts share the deadline and the caller's signal). */
interface Exchange {
  timedOut: boolean;
  aborted: boolean;
  /** The attempt on the wire, to abort. */
  current: Dispatcher.DispatchController | undefined;
}

const isStopped = (exchange: Exchange) => exchange.timedOut || exchange.aborted;

/**
 * Whether an attempt failed on a connection that had carried an earlier exchange (a keep-alive
 * connection the receiver closed just as it was reused): undici's socket errors tell what the
 * connection had read.
 */
function wasReused(error: unknown): boolean {
  const socket = (error as { socket?: { bytesRead?: number } } | null)?.socket;
  return typeof socket?.bytesRead === "number" && socket.bytesRead > 0;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function isReset(err: unknown): boolean {
  if (!(err instanceof Error) || !("code" in err)) return false;
  return err.code === "ECONNRESET" || err.code === "EPIPE" || err.code === "UND_ERR_SOCKET";
}
