import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  mapsAsAdditionalProperties,
  nameInlineResponses,
  pruneUnusedComponents,
  webhooksFromEvents,
} from "../scripts/openapi-post.mjs";

// The post-processing steps of `npm run gen` (scripts/openapi-post.mjs), on small documents, and
// what they guarantee on the committed openapi.yaml.
type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

describe("mapsAsAdditionalProperties", () => {
  it("writes a plain map as additionalProperties, in place", () => {
    const doc: Doc = {
      components: {
        schemas: {
          Lead: {
            type: "object",
            properties: { socialProfiles: { type: "object", unevaluatedProperties: { type: "string" } } },
          },
        },
      },
    };
    mapsAsAdditionalProperties(doc);
    expect(doc.components.schemas.Lead.properties.socialProfiles).toEqual({
      type: "object",
      additionalProperties: { type: "string" },
    });
  });

  it("keeps unevaluatedProperties beside allOf, where the two differ", () => {
    const schema = { allOf: [ref("Base")], unevaluatedProperties: { not: {} } };
    mapsAsAdditionalProperties({ schema });
    expect(schema).toEqual({ allOf: [ref("Base")], unevaluatedProperties: { not: {} } });
  });
});

describe("nameInlineResponses", () => {
  const op = (operationId: string, responses: Doc) => ({ operationId, responses });
  const json = (schema: Doc) => ({ description: "x", content: { "application/json": { schema } } });
  const envelope = (data: Doc) => ({ type: "object", properties: { data }, required: ["data"] });

  it("names envelopes by their data type, shares equal ones, and names error unions by operation", () => {
    const doc: Doc = {
      paths: {
        "/a": {
          get: op("getThing", {
            200: json(envelope({ ...ref("Thing"), description: "The result." })),
            429: json({ anyOf: [ref("RateLimitError"), ref("BusyError")] }),
          }),
          post: op("createThing", {
            201: json(envelope({ ...ref("Thing"), description: "The created resource." })),
          }),
        },
        "/b": { get: op("listThings", { 200: json(envelope({ type: "array", items: ref("Thing") })) }) },
        "/c": { get: op("listNames", { 200: json(envelope({ type: "array", items: { type: "string" } })) }) },
      },
      components: { schemas: {} },
    };
    nameInlineResponses(doc);
    const schemaOf = (path: string, method: string, status: number) =>
      doc.paths[path][method].responses[status].content["application/json"].schema;
    expect(schemaOf("/a", "get", 200)).toEqual(ref("ThingResponse"));
    expect(schemaOf("/a", "post", 201)).toEqual(ref("ThingResponse"));
    expect(schemaOf("/a", "get", 429)).toEqual(ref("GetThingTooManyRequestsError"));
    expect(schemaOf("/b", "get", 200)).toEqual(ref("ThingListResponse"));
    expect(schemaOf("/c", "get", 200)).toEqual(ref("ListNamesResult"));
    expect(doc.components.schemas.GetThingTooManyRequestsError).toEqual({
      anyOf: [ref("RateLimitError"), ref("BusyError")],
    });
  });

  it("refuses a name that an SDK generator gives an operation's own types", () => {
    const doc: Doc = {
      paths: {
        "/a": { get: op("thingList", { 200: json(envelope({ type: "array", items: ref("Thing") })) }) },
        "/b": { get: op("thing", { 200: json(envelope(ref("Other"))) }) },
      },
      components: { schemas: {} },
    };
    // `thing` makes @hey-api name its types ThingResponse, ThingData, ...; `ThingListResponse` is free.
    expect(() => nameInlineResponses(doc)).toThrow(/ThingListResponse collides/);
  });
});

describe("webhooksFromEvents and pruneUnusedComponents", () => {
  it("writes one webhook per event of the marked union, with the delivery headers", () => {
    const doc: Doc = {
      paths: {},
      components: {
        schemas: {
          Event: {
            anyOf: [ref("ACreated")],
            discriminator: {
              propertyName: "type",
              mapping: { "a.created": "#/components/schemas/ACreated" },
            },
            "x-webhooks": { headers: "DeliveryHeaders", tag: "Events" },
          },
          ACreated: {
            type: "object",
            description: "Event `a.created`.",
            properties: { type: { const: "a.created" } },
          },
          EventType: { type: "string" },
          DeliveryHeaders: {
            type: "object",
            required: ["X-Event"],
            properties: { "X-Event": { allOf: [ref("EventType")], description: "The event's type." } },
          },
          Unused: { type: "object" },
        },
      },
    };
    webhooksFromEvents(doc);
    pruneUnusedComponents(doc);
    const post = doc.webhooks["a.created"].post;
    expect(post.operationId).toBe("aCreatedEvent");
    expect(post.requestBody.content["application/json"].schema).toEqual(ref("ACreated"));
    expect(post.parameters).toEqual([
      {
        name: "X-Event",
        in: "header",
        required: true,
        description: "The event's type.",
        schema: ref("EventType"),
      },
    ]);
    expect(post.tags).toEqual(["Events"]);
    expect(Object.keys(doc.components.schemas).sort()).toEqual(["ACreated", "EventType"]);
  });
});

describe("the committed openapi.yaml", () => {
  const doc = parse(readFileSync(new URL("../openapi.yaml", import.meta.url), "utf8")) as Doc;
  const text = JSON.stringify(doc);

  it("has no unevaluatedProperties and the six events as webhooks", () => {
    expect(text).not.toContain("unevaluatedProperties");
    expect(Object.keys(doc.webhooks).sort()).toEqual([
      "credit.low_balance",
      "email_schedule.sent",
      "export.completed",
      "export.leads",
      "lead.created",
      "lead.updated",
    ]);
  });

  it("names every JSON object answer and every union of errors", () => {
    for (const item of Object.values(doc.paths) as Doc[]) {
      for (const op of Object.values(item) as Doc[]) {
        for (const [status, response] of Object.entries(op.responses as Doc)) {
          const schema = response.content?.["application/json"]?.schema;
          if (!schema) continue;
          const members: Doc[] = schema.anyOf ?? [schema];
          for (const member of members) {
            const inline = !member.$ref && (member.type === "object" || Boolean(member.anyOf));
            expect(inline, `${op.operationId} ${status}`).toBe(false);
          }
        }
      }
    }
  });

  it("has no request-body field with a default (openapi-typescript would make it required)", () => {
    const schemas = doc.components.schemas as Record<string, Doc>;
    const bodies = new Set<string>();
    for (const item of Object.values(doc.paths) as Doc[]) {
      for (const op of Object.values(item) as Doc[]) {
        const r = op.requestBody?.content?.["application/json"]?.schema?.$ref as string | undefined;
        if (r) bodies.add(r.split("/").pop()!);
      }
    }
    const seen = new Set<string>();
    const visit = (name: string) => {
      if (seen.has(name)) return;
      seen.add(name);
      const schema = schemas[name]!;
      for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, Doc>)) {
        expect("default" in property, `${name}.${key}`).toBe(false);
      }
      for (const inner of JSON.stringify(schema).matchAll(/#\/components\/schemas\/([A-Za-z0-9_.]+)/g)) {
        visit(inner[1]!);
      }
    };
    for (const name of bodies) visit(name);
  });
});
