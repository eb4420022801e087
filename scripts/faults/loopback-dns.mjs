// Preloaded into the service's processes by the fault scenarios (`NODE_OPTIONS=--import ...`):
// host names ending in `.faults.test` resolve to 127.0.0.1, so the enrichment crawler of a real
// worker process reads the scenario's local websites (one server answering for many names by the
// Host header) without any DNS server. Every other name goes to the operating system's resolver.
import dns from "node:dns";
import { syncBuiltinESMExports } from "node:module";

const SUFFIX = ".faults.test";
const local = (hostname) => typeof hostname === "string" && hostname.toLowerCase().endsWith(SUFFIX);
const entry = { address: "127.0.0.1", family: 4 };

const lookup = dns.lookup;
dns.lookup = function faultsLookup(hostname, options, callback) {
  if (!local(hostname)) return lookup.call(this, hostname, options, callback);
  const cb = typeof options === "function" ? options : callback;
  const all = typeof options === "object" && options !== null && options.all;
  process.nextTick(() => (all ? cb(null, [entry]) : cb(null, entry.address, entry.family)));
  return {};
};

const lookupPromise = dns.promises.lookup;
dns.promises.lookup = async function faultsLookupPromise(hostname, options) {
  if (!local(hostname)) return lookupPromise.call(this, hostname, options);
  const all = typeof options === "object" && options !== null && options.all;
  return all ? [entry] : entry;
};

syncBuiltinESMExports();
