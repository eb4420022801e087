// Types of scripts/openapi-post.mjs (the steps `npm run gen` applies to TypeSpec's output).
type Doc = Record<string, unknown>;
export function mapsAsAdditionalProperties<T>(doc: T): T;
export function nameInlineResponses<T>(doc: T): T;
export function webhooksFromEvents<T>(doc: T): T;
export function pruneUnusedComponents<T>(doc: T, keep?: string[]): T;
export function sdkOperationTypeNames(doc: Doc): Set<string>;
export function mergeExamples<T>(doc: T, examples: Record<string, unknown>): T;
export function postProcess<T>(doc: T, examples?: Record<string, unknown>): T;
