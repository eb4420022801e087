import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

// Every operation of openapi.yaml (and every webhook) has an example request and answer
// (spec/examples/*.json, merged by `npm run gen`), shown at /docs; each matches its schema.
type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const doc = parse(readFileSync(new URL("../openapi.yaml", import.meta.url), "utf8")) as Doc;

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats.default(ajv);
ajv.addSchema({ ...doc, $id: "openapi" });
const pointer = (...parts: string[]) =>
  parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

/** Checks `value` against the schema at `path` of openapi.yaml; resolves with the problems. */
function problems(path: string, value: unknown): string {
  const validate = ajv.compile({ $ref: `openapi#/${path}` });
  return validate(value) ? "" : ajv.errorsText(validate.errors);
}

interface Op {
  where: string;
  base: string;
  op: Doc;
}
const ops: Op[] = [];
for (const [section, items] of [
  ["paths", doc.paths],
  ["webhooks", doc.webhooks],
] as const) {
  for (const [path, item] of Object.entries(items as Doc)) {
    for (const [method, op] of Object.entries(item as Doc)) {
      ops.push({ where: op.operationId ?? `${method} ${path}`, base: pointer(section, path, method), op });
    }
  }
}

describe("examples", () => {
  it("every operation has an example answer, and one request body where it takes a body", () => {
    const missing: string[] = [];
    for (const { where, op } of ops) {
      const answers = Object.values(op.responses as Doc).flatMap(
        (r: Doc) => Object.values(r.content ?? {}) as Doc[],
      );
      if (answers.length > 0 && !answers.some((c) => c.examples)) missing.push(`${where}: answer`);
      const body = Object.values(op.requestBody?.content ?? {}) as Doc[];
      if (body.length > 0 && !body.some((c) => c.examples)) missing.push(`${where}: request body`);
    }
    expect(missing).toEqual([]);
  });

  it("every example matches its schema", () => {
    const wrong: string[] = [];
    const check = (where: string, path: string, value: unknown) => {
      const found = problems(path, value);
      if (found) wrong.push(`${where}: ${found}`);
    };
    for (const { where, base, op } of ops) {
      for (const [mediaType, content] of Object.entries((op.requestBody?.content ?? {}) as Doc)) {
        for (const example of Object.values((content.examples ?? {}) as Doc)) {
          check(
            `${where} request`,
            `${base}/requestBody/content/${pointer(mediaType)}/schema`,
            example.value,
          );
        }
      }
      for (const [status, response] of Object.entries(op.responses as Doc)) {
        for (const [mediaType, content] of Object.entries((response.content ?? {}) as Doc)) {
          if (mediaType !== "application/json") continue; // files: text shown as is
          for (const example of Object.values((content.examples ?? {}) as Doc)) {
            check(
              `${where} ${status}`,
              `${base}/responses/${status}/content/${pointer(mediaType)}/schema`,
              example.value,
            );
          }
        }
      }
      for (const p of (op.parameters ?? []) as Doc[]) {
        const param = p.$ref ? doc.components.parameters[p.$ref.split("/").pop()] : p;
        if (param.example === undefined) continue;
        const path = p.$ref
          ? `components/parameters/${pointer(p.$ref.split("/").pop())}/schema`
          : `${base}/parameters/${(op.parameters as Doc[]).indexOf(p)}/schema`;
        check(`${where} ${param.name}`, path, param.example);
      }
    }
    expect(wrong).toEqual([]);
  });
});
