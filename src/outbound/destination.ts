import { promises as dns } from "node:dns";
import type { LookupAddress, LookupOptions } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { Agent } from "undici";
import { isRefusedAddress } from "./addresses.js";

/** All addresses of a host name (tests pass a stub to play DNS rebinding). */
export type Resolver = (hostname: string) => Promise<string[]>;

/** What outbound requests may reach. */
export interface OutboundPolicy {
  /** `OUTBOUND_ALLOW_PRIVATE`: skip every address check (local plain-HTTP receivers in dev and tests). */
  allowPrivate: boolean;
  /** Default: the operating system's resolver (`dns.lookup`, every address, in its own order). */
  resolve?: Resolver;
  /**
   * Which addresses are refused; default `isRefusedAddress`. Tests only: a narrower set lets a local
   * server on 127.0.0.1 play a public site while 127.0.0.2 stays refused.
   */
  refuses?: (ip: string) => boolean;
}

/** A destination the service will not send to; `reason` is short and safe to show the customer. */
export class OutboundRefusedError extends Error {
  constructor(readonly reason: string) {
    super(`outbound request refused: ${reason}`);
    this.name = "OutboundRefusedError";
  }
}

/** The operating system's resolver, as `fetch` and `http.request` would use it. */
export const systemResolver: Resolver = async (hostname) => {
  const found = await dns.lookup(hostname, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
};

/** A parsed destination URL; `host` is the hostname without IPv6 brackets. */
export interface Target {
  url: URL;
  host: string;
  /** The host is an IP address literal, which Node connects to without calling `lookup`. */
  literal: boolean;
}

/**
 * Parses a destination URL and checks what does not depend on DNS: the scheme (http or https: a
 * `file:` or `ftp:` URL must never be fetched on a customer's behalf) and the absence of
 * credentials (they would travel to the receiver in the clear and end up in logs).
 * @throws OutboundRefusedError
 */
export function parseTarget(raw: string): Target {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefusedError("not a valid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new OutboundRefusedError("only http and https URLs are allowed");
  }
  if (url.username !== "" || url.password !== "") {
    throw new OutboundRefusedError("URLs with a user name or password are not allowed");
  }
  // WHATWG parsing has already normalised the host (`0x7f.1` is `127.0.0.1`, IPv6 is compressed),
  // so the host checked here is the one connected to.
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "") throw new OutboundRefusedError("the URL has no host");
  return { url, host, literal: isIP(host) !== 0 };
}

/** Throws when an IP literal host is refused (literals never reach `lookup`: they are checked up front). */
export function checkLiteral(target: Target): void {
  if (target.literal && isRefusedAddress(target.host)) {
    throw new OutboundRefusedError(`${target.host} is a private or reserved address`);
  }
}

/**
 * Resolves a host name for a check at creation and throws unless every address is allowed.
 * @throws OutboundRefusedError
 */
export async function resolveAllowed(resolve: Resolver, host: string): Promise<string[]> {
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    throw new OutboundRefusedError(`${host} does not resolve`);
  }
  if (addresses.length === 0) throw new OutboundRefusedError(`${host} does not resolve`);
  const refused = refusal(host, addresses);
  if (refused) throw refused;
  return addresses;
}

/**
 * The refusal of a name's addresses, or null. One refused address is enough: the operating system
 * may connect to any of them.
 */
function refusal(
  host: string,
  addresses: string[],
  refuses: (ip: string) => boolean = isRefusedAddress,
): OutboundRefusedError | null {
  const refused = addresses.find(refuses);
  return refused === undefined
    ? null
    : new OutboundRefusedError(`${host} resolves to ${refused}, a private or reserved address`);
}

/**
 * The `lookup` hook of every outbound connection. Node calls it when it opens a socket to a host
 * name, and connects to exactly the addresses it returns, so checking them here (not in a DNS query
 * of our own beforehand) defeats DNS rebinding: a name that resolved to a public address when the
 * destination was saved, and to 127.0.0.1 now, is refused now. A refusal fails the connection with
 * an `OutboundRefusedError`, which reaches the request's `error` event unchanged.
 */
export function guardedLookup(policy: OutboundPolicy): LookupFunction {
  const resolve = policy.resolve ?? systemResolver;
  return (hostname, options: LookupOptions, callback) => {
    Promise.resolve(hostname)
      .then(resolve)
      .then(
        (addresses) => {
          const refused = policy.allowPrivate ? null : refusal(hostname, addresses, policy.refuses);
          if (refused) {
            callback(refused, options.all ? [] : "", 0);
            return;
          }
          const family = familyNumber(options.family);
          const usable: LookupAddress[] = addresses
            .map((address) => ({ address, family: isIP(address) }))
            .filter((entry) => entry.family !== 0 && (family === 0 || entry.family === family));
          const first = usable[0];
          if (first === undefined) {
            callback(notFound(hostname), options.all ? [] : "", 0);
          } else if (options.all) {
            callback(null, usable);
          } else {
            callback(null, first.address, first.family);
          }
        },
        (err: unknown) => {
          const error = err instanceof Error ? err : notFound(hostname);
          callback(error, options.all ? [] : "", 0);
        },
      );
  };
}

/**
 * How long an idle keep-alive connection is kept: below the 5 s idle timeout of common servers
 * (Node's own included), so a reused connection is rarely one the other side is just closing. A
 * server's `Keep-Alive: timeout=N` may shorten it, never lengthen it.
 */
const IDLE_SOCKET_MS = 4_000;

/**
 * A keep-alive undici agent whose connections go through the guard's `lookup` (webhook POSTs and
 * page reads each have one per `Outbound`), `connections` per origin at most.
 */
export function guardedAgent(
  policy: OutboundPolicy,
  connections: number,
  options: Omit<Agent.Options, "connect" | "connections"> = {},
): Agent {
  return new Agent({
    connections,
    keepAliveTimeout: IDLE_SOCKET_MS,
    keepAliveMaxTimeout: IDLE_SOCKET_MS,
    ...options,
    connect: { lookup: guardedLookup(policy) },
  });
}

function familyNumber(family: LookupOptions["family"]): number {
  if (family === "IPv4" || family === 4) return 4;
  if (family === "IPv6" || family === 6) return 6;
  return 0;
}

/** The error `dns.lookup` gives for a name without addresses (of the asked family). */
function notFound(hostname: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
  error.code = "ENOTFOUND";
  return error;
}
