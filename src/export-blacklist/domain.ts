import { domainToASCII } from "node:url";

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//;

/**
 * The host of a URL or bare domain, reduced as blacklist values are: lower-cased, without scheme,
 * user information, port, path, query, fragment, trailing dot, a leading `*.` or `www.`; an
 * internationalised name in punycode (`bücher.de` -> `xn--bcher-kva.de`). Not checked to be a
 * domain name (lead URLs are matched leniently); undefined when no host can be read.
 */
export function urlHost(raw: string): string | undefined {
  let value = raw.trim().toLowerCase();
  if (value.length === 0) return undefined;
  if (!SCHEME.test(value)) value = value.startsWith("//") ? `http:${value}` : `http://${value}`;
  let host: string;
  try {
    host = new URL(value).hostname;
  } catch {
    return undefined;
  }
  host = domainToASCII(host.replace(/\.$/, "")) || host.replace(/\.$/, "");
  if (host.startsWith("*.")) host = host.slice(2);
  if (host.startsWith("www.")) host = host.slice(4);
  return host.length > 0 ? host : undefined;
}

/**
 * The domain of a blacklist value: `urlHost` of it, when that is a domain name of at least two
 * labels (letters, digits, inner hyphens; not an IP address, a single word or an empty value);
 * otherwise undefined.
 */
export function normalizeDomain(raw: string): string | undefined {
  const host = urlHost(raw);
  if (host === undefined || host.length > 253) return undefined;
  const labels = host.split(".");
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return undefined;
  // The top-level label is never all digits: that excludes IPv4 addresses.
  if (/^\d+$/.test(labels[labels.length - 1] ?? "")) return undefined;
  return host;
}
