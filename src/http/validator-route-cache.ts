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

if (!pathToRegexpModule.__memoised) {
  const original = pathToRegexpModule.pathToRegexp;
  const cache = new Map<string, unknown>();
  pathToRegexpModule.pathToRegexp = (path: string, options?: object) => {
    const key = `${path}\u0000${JSON.stringify(options ?? {})}`;
    let compiled = cache.get(key);
    if (compiled === undefined) {
      compiled = original(path, options);
      cache.set(key, compiled);
    }
    return compiled;
  };
  pathToRegexpModule.__memoised = true;
}
