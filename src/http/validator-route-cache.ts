import { createRequire } from "node:module";

/**
 * express-openapi-validator 5.6.2 compiles `pathToRegexp` for every route of the contract on every
 * request (lookupRoute in openapi.metadata.js): about a tenth of the API's CPU under load. The
 * compiled regexps depend only on the route and options, so they are memoised here, on the same
 * module instance the validator loads. Behaviour is unchanged.
 */
const require = createRequire(createRequire(import.meta.url).resolve("express-openapi-validator"));
const pathToRegexpModule = require("path-to-regexp") as {
  pathToRegexp: (path: string, options?: object) => unknown;
  __memoised?: boolean;
};

/**
 * The memo key of one compile. The validator passes only `sensitive` and `strict`, so the common
 * case avoids JSON.stringify (about a tenth of the API's CPU when it ran for every route).
 */
function memoKey(path: string, options: object | undefined): string {
  const opts = (options ?? {}) as Record<string, unknown>;
  const keys = Object.keys(opts);
  if (keys.every((k) => k === "sensitive" || k === "strict")) {
    return `${path}\u0000${opts.sensitive ? 1 : 0}${opts.strict ? 1 : 0}`;
  }
  return `${path}\u0000${JSON.stringify(opts)}`;
}

if (!pathToRegexpModule.__memoised) {
  const original = pathToRegexpModule.pathToRegexp;
  const cache = new Map<string, unknown>();
  pathToRegexpModule.pathToRegexp = (path: string, options?: object) => {
    const key = memoKey(path, options);
    let compiled = cache.get(key);
    if (compiled === undefined) {
      compiled = original(path, options);
      cache.set(key, compiled);
    }
    return compiled;
  };
  pathToRegexpModule.__memoised = true;
}
