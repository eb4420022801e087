import { createRequire } from "node:module";

/**
 * Disposable e-mail domains, from the maintained list of the `disposable-email-domains` package
 * (a JSON array of domains), loaded once. The package is not installed on this machine yet (see
 * docs/purchase.md): until it is, no domain counts as disposable and purchases are not refused
 * with 403 `disposable_email`.
 */
let domains: ReadonlySet<string> | undefined;

function load(): ReadonlySet<string> {
  try {
    const list = createRequire(import.meta.url)("disposable-email-domains") as unknown;
    return new Set(Array.isArray(list) ? list.filter((d): d is string => typeof d === "string") : []);
  } catch {
    return new Set();
  }
}

/** Whether the list of disposable domains is available on this deployment. */
export function disposableListLoaded(): boolean {
  domains ??= load();
  return domains.size > 0;
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
