import { randomBytes } from "node:crypto";

/**
 * A JSON value already serialised (a search page's leads, built by PostgreSQL), written into an
 * answer as it is: no objects are built for it in the service and it is not serialised again.
 * Outside serialiseAnswer (a test's JSON.stringify, the contract validator in tests) it stands for
 * its parsed value.
 */
export class JsonText {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    if (collected) return `${PLACEHOLDER}${collected.push(this.text) - 1}`;
    return JSON.parse(this.text);
  }
}

/**
 * A serialised value where the contract wants a `T`: the text's producer vouches for its shape
 * (its tests compare it with the presenter and check answers against openapi.yaml).
 */
export function jsonText<T>(text: string): T {
  return new JsonText(text) as unknown as T;
}

/** Texts of the JsonText values met while serialiseAnswer runs (JSON.stringify is synchronous). */
let collected: string[] | null = null;
/** Marks a JsonText's place in the serialised answer; the random part keeps it from any real value. */
const PLACEHOLDER = `\u0000${randomBytes(6).toString("hex")}:`;
const PLACEHOLDER_STRING = new RegExp(
  `"${JSON.stringify(PLACEHOLDER).slice(1, -1).replace(/\\/g, "\\\\")}(\\d+)"`,
  "g",
);

/**
 * JSON.stringify of an answer body with every JsonText in it written as its text; `spliced` tells
 * whether there was any.
 */
export function serialiseAnswer(body: unknown): { text: string; spliced: boolean } {
  const texts: string[] = [];
  collected = texts;
  let text: string;
  try {
    text = JSON.stringify(body);
  } finally {
    collected = null;
  }
  if (texts.length === 0) return { text, spliced: false };
  return {
    text: text.replace(PLACEHOLDER_STRING, (_match, index: string) => texts[Number(index)]!),
    spliced: true,
  };
}
