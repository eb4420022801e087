/** One member of a compiled shape: its key and the JavaScript expression of its value over `v`. */
export type ShapeMember = readonly [key: string, expression: string];

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** JavaScript source reading property `name` of `object` (any name, quoted). */
export function member(object: string, name: string): string {
  return `${object}[${JSON.stringify(name)}]`;
}

/**
 * A function of one argument `v` that returns one object literal with fixed keys, compiled once
 * from the lead field catalogue (src/leads/fields.ts). Why compiled: V8 builds an object literal
 * 3-5 times faster than the same object filled key by key, and past a dozen keys set by computed
 * name the object falls into dictionary mode, slower to read too (docs/performance.md, 2026-11-24
 * "Refresh within 2x of an export"; for 70 fields 5-8x: docs/leads.md "Shapes compiled once").
 * Keys are quoted; expressions and helper names come from the catalogue's code, never from input.
 */
export function compileShape<A, R>(
  name: string,
  members: readonly ShapeMember[],
  helpers: Readonly<Record<string, unknown>> = {},
): (v: A) => R {
  const names = Object.keys(helpers);
  for (const n of [name, ...names]) if (!IDENTIFIER.test(n)) throw new Error(`not an identifier: ${n}`);
  const body = members.map(([key, expression]) => `${JSON.stringify(key)}: ${expression}`).join(",\n    ");
  const source = `return function ${name}(v) {\n  return {\n    ${body}\n  };\n};`;
  // Source built from the catalogue only (see above), never from input.
  const make = new Function(...names, source) as (...values: unknown[]) => (v: A) => R;
  return make(...names.map((n) => helpers[n]));
}
