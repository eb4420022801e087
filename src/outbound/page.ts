import { request, type Agent, type Dispatcher } from "undici";
import { isRefusedAddress } from "./addresses.js";
import { guardedAgent, OutboundRefusedError, parseTarget, type Target } from "./destination.js";
import type { Outbound } from "./outbound.js";
import { failureReason } from "./result.js";

/** A whole read (every redirect included) gets 10 seconds unless the caller says otherwise. */
const DEFAULT_TIMEOUT_MS = 10_000;
/** Bytes of a page kept: a small business's home page is far below 1 MiB; a larger answer is cut. */
const DEFAULT_MAX_BYTES = 1_048_576;
const DEFAULT_MAX_REDIRECTS = 5;
const DEFAULT_USER_AGENT = "Mozilla/5.0 (compatible; LeadServiceBot/1.0)";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** A page read from a customer-supplied URL. */
export interface FetchedPage {
  /** The URL that answered, after redirects. */
  finalUrl: string;
  /** The final answer's HTTP status (any status: a 404 or 500 page is still a page). */
  status: number;
  /** The `Content-Type` header of the final answer, if any. */
  contentType: string | undefined;
  /** The body decoded as text (charset of the header or a `<meta charset>`, else UTF-8), at most `maxBytes` bytes of it. */
  body: string;
}

export interface FetchPageOptions {
  /** The whole read, redirects included. Default 10,000. */
  timeoutMs?: number;
  /** Bytes of the final body kept; the rest is not downloaded. Default 1 MiB. */
  maxBytes?: number;
  /** Redirects followed (each to an allowed address only). Default 5. */
  maxRedirects?: number;
  userAgent?: string;
  /** Ends the read with a `PageFetchError` of kind `aborted`. */
  signal?: AbortSignal;
}

/** Why a page could not be read. */
export type PageFetchFailure = "refused" | "timeout" | "too_many_redirects" | "network" | "aborted";

/** A page read that got no usable answer; `reason` is short and safe to show a customer. */
export class PageFetchError extends Error {
  constructor(
    readonly kind: PageFetchFailure,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`page fetch failed: ${reason}`, options);
    this.name = "PageFetchError";
  }
}

/** One keep-alive agent per `Outbound`, connecting through its guarded `lookup`. */
const agents = new WeakMap<Outbound, Agent>();

function agentOf(outbound: Outbound): Agent {
  let agent = agents.get(outbound);
  if (!agent) {
    agent = guardedAgent(outbound.policy, 8);
    agents.set(outbound, agent);
  }
  return agent;
}

/** Closes the page agent of `outbound` (at shutdown; reads in flight are cut). */
export async function closePageAgent(outbound: Outbound): Promise<void> {
  const agent = agents.get(outbound);
  agents.delete(outbound);
  await agent?.destroy();
}

/**
 * Reads one page (GET) from a customer-supplied URL under the same guard as webhook POSTs: only
 * http(s) without credentials; every hop of a redirect chain is checked (an address literal up
 * front, a host name at connect time through the `lookup` hook, which defeats DNS rebinding), so a
 * public site cannot bounce the read to a private, loopback, link-local or metadata address unless
 * `OUTBOUND_ALLOW_PRIVATE` is on. One deadline covers the whole read; at most `maxBytes` of the
 * final body are downloaded. Never follows more than `maxRedirects` redirects.
 * @throws PageFetchError
 */
export async function fetchPage(
  outbound: Outbound,
  url: string,
  options: FetchPageOptions = {},
): Promise<FetchedPage> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline.signal, options.signal]) : deadline.signal;
  const dispatcher = agentOf(outbound);
  const headers = {
    "user-agent": options.userAgent ?? DEFAULT_USER_AGENT,
    accept: "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
    "accept-language": "en-US,en;q=0.8",
  };
  try {
    let current = url;
    for (let hop = 0; ; hop += 1) {
      const target = checkHop(outbound, current);
      let answer: Dispatcher.ResponseData;
      try {
        answer = await request(target.url, { method: "GET", headers, signal, dispatcher });
      } catch (err) {
        throw failure(err, deadline.signal, options.signal, timeoutMs);
      }
      const location = answer.headers.location;
      if (REDIRECT_STATUSES.has(answer.statusCode) && location !== undefined) {
        await answer.body.dump().catch(() => undefined);
        if (hop >= maxRedirects) {
          throw new PageFetchError("too_many_redirects", `more than ${maxRedirects} redirects`);
        }
        current = resolveLocation(Array.isArray(location) ? (location[0] ?? "") : location, target.url);
        continue;
      }
      const contentType = headerText(answer.headers["content-type"]);
      let bytes: Buffer;
      try {
        bytes = await readCapped(answer.body, maxBytes);
      } catch (err) {
        throw failure(err, deadline.signal, options.signal, timeoutMs);
      }
      return {
        finalUrl: target.url.href,
        status: answer.statusCode,
        contentType,
        body: decode(bytes, contentType),
      };
    }
  } finally {
    clearTimeout(timer);
  }
}

/** The checks of one hop that do not wait for DNS (the connect-time `lookup` does the rest). */
function checkHop(outbound: Outbound, url: string): Target {
  try {
    const target = parseTarget(url);
    const refuses = outbound.policy.refuses ?? isRefusedAddress;
    if (!outbound.policy.allowPrivate && target.literal && refuses(target.host)) {
      throw new OutboundRefusedError(`${target.host} is a private or reserved address`);
    }
    return target;
  } catch (err) {
    throw new PageFetchError("refused", failureReason(err), { cause: err });
  }
}

function resolveLocation(location: string, base: URL): string {
  try {
    return new URL(location, base).href;
  } catch {
    // An unusable Location is refused by the next hop's check, with the URL named.
    return location;
  }
}

/** Reads at most `maxBytes` of a body, then stops downloading (the connection is closed). */
async function readCapped(body: Dispatcher.ResponseData["body"], maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    const room = maxBytes - size;
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    size += Math.min(room, chunk.length);
    if (size >= maxBytes) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks, size);
}

function failure(
  err: unknown,
  deadline: AbortSignal,
  callerSignal: AbortSignal | undefined,
  timeoutMs: number,
): PageFetchError {
  if (err instanceof PageFetchError) return err;
  if (deadline.aborted)
    return new PageFetchError("timeout", `timed out after ${timeoutMs / 1000} s`, { cause: err });
  if (callerSignal?.aborted) return new PageFetchError("aborted", "aborted", { cause: err });
  const refused = refusalIn(err);
  if (refused) return new PageFetchError("refused", failureReason(refused), { cause: err });
  return new PageFetchError("network", failureReason(causeOf(err)), { cause: err });
}

/** The `OutboundRefusedError` of the connect-time guard, however undici wrapped it. */
function refusalIn(err: unknown): OutboundRefusedError | null {
  for (let current: unknown = err, depth = 0; current && depth < 5; depth += 1) {
    if (current instanceof OutboundRefusedError) return current;
    if (current instanceof AggregateError) {
      const inner = current.errors.find((e) => e instanceof OutboundRefusedError) as
        OutboundRefusedError | undefined;
      if (inner) return inner;
    }
    current = current instanceof Error ? current.cause : undefined;
  }
  return null;
}

/** undici's fetch-style wrappers keep the socket error as `cause`; its own errors stand alone. */
function causeOf(err: unknown): unknown {
  return err instanceof Error && err.cause instanceof Error && !("code" in err) ? err.cause : err;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Decodes with the header's charset, else a `<meta charset>` near the top, else UTF-8. */
function decode(bytes: Buffer, contentType: string | undefined): string {
  const declared =
    /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? "")?.[1] ??
    /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(bytes.subarray(0, 2048).toString("latin1"))?.[1];
  if (declared) {
    try {
      return new TextDecoder(declared).decode(bytes);
    } catch {
      // An unknown label: fall back to UTF-8.
    }
  }
  return new TextDecoder("utf-8").decode(bytes);
}
