import { createRequire } from "node:module";

/**
 * Disposable e-mail domains: the maintained list of the `disposable-email-domains` package (a
 * JSON array of domains, updated by its maintainers), loaded once on first use.
 */
let domains: ReadonlySet<string> | undefined;

function load(): ReadonlySet<string> {
  const list = createRequire(import.meta.url)("disposable-email-domains") as unknown;
  if (!Array.isArray(list)) throw new Error("disposable-email-domains is not a list of domains");
  return new Set(list.filter((d): d is string => typeof d === "string").map((d) => d.toLowerCase()));
}

/** Whether the domain (or a parent domain of it) is a known disposable-mail domain. */
export function isDisposableDomain(domain: string): boolean {
  domains ??= load();
  const labels = domain.toLowerCase().split(".");
  for (let i = 0; i < labels.length - 1; i += 1) {
    if (domains.has(labels.slice(i).join("."))) return true;
  }
  return false;
}
