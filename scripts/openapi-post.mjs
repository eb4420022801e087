// The steps `npm run gen` applies to the OpenAPI document TypeSpec emits, for what TypeSpec 1.11's
// emitter options and decorators cannot express but client generators need. Each step is a pure
// function of the parsed document (tested in test/sdk-openapi-post.test.ts); the reasons are in
// docs/contract.md.

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** Keywords that apply other schemas in place: next to them, `unevaluatedProperties` differs. */
const IN_PLACE = ["allOf", "anyOf", "oneOf", "$ref", "not", "if", "dependentSchemas"];

/** Calls `visit` on every object of `node`, depth first (parents before children). */
function walk(node, visit) {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, visit);
  } else if (node && typeof node === "object") {
    visit(node);
    for (const value of Object.values(node)) walk(value, visit);
  }
}

/** A copy of `object` with the key `from` renamed to `to`, in the same position. */
function renameKey(object, from, to) {
  const entries = Object.entries(object).map(([k, v]) => [k === from ? to : k, v]);
  for (const key of Object.keys(object)) delete object[key];
  Object.assign(object, Object.fromEntries(entries));
}

/**
 * Maps (`Record<T>`) as `additionalProperties`. The 3.1 emitter writes them as
 * `unevaluatedProperties` (microsoft/typespec#11953), which openapi-typescript and @hey-api do not
 * read: a map becomes an object without properties. Without in-place applicators beside it the
 * two keywords mean the same, so only such schemas are changed.
 */
export function mapsAsAdditionalProperties(doc) {
  walk(doc, (node) => {
    if (!("unevaluatedProperties" in node) || "additionalProperties" in node) return;
    if (IN_PLACE.some((k) => k in node)) return;
    renameKey(node, "unevaluatedProperties", "additionalProperties");
  });
  return doc;
}

function operations(doc) {
  const out = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      if (item[method]) out.push({ path, method, op: item[method] });
    }
  }
  return out;
}

const pascal = (s) => s.charAt(0).toUpperCase() + s.slice(1);

const STATUS_NAMES = {
  400: "BadRequest",
  401: "Unauthorized",
  402: "PaymentRequired",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  410: "Gone",
  413: "PayloadTooLarge",
  422: "UnprocessableContent",
  429: "TooManyRequests",
  500: "Server",
  502: "BadGateway",
  503: "ServiceUnavailable",
};

/** The component a `$ref` (or a one-member `allOf` of one) names, if the schema is only that. */
function refName(schema) {
  if (!schema || typeof schema !== "object") return null;
  if (typeof schema.$ref === "string") return schema.$ref.split("/").pop();
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return refName(schema.allOf[0]);
  return null;
}

/** The names @hey-api/openapi-ts gives an operation's own types (`<Operation>Data`, ...). */
export function sdkOperationTypeNames(doc) {
  const names = new Set();
  for (const { op } of operations(doc)) {
    if (!op.operationId) continue;
    for (const suffix of ["Data", "Errors", "Error", "Responses", "Response"]) {
      names.add(pascal(op.operationId) + suffix);
    }
  }
  return names;
}

/**
 * Named components for the response bodies the emitter writes inline: the `{data}` success
 * envelopes (`<DataType>Response`, `<DataType>ListResponse`, else `<Operation>Result`) and the
 * unions of errors one status can answer (`<Operation><StatusName>Error`). The emitter merges the
 * responses of one status into one inline schema, so the spec cannot name them. Identical
 * envelopes of the same data type share one component.
 */
export function nameInlineResponses(doc) {
  const schemas = ((doc.components ??= {}).schemas ??= {});
  const reserved = sdkOperationTypeNames(doc);
  const add = (name, schema) => {
    if (reserved.has(name)) throw new Error(`component name ${name} collides with an SDK operation type`);
    const existing = schemas[name];
    if (existing && JSON.stringify(existing) !== JSON.stringify(schema)) {
      throw new Error(`component name ${name} is taken by a different schema`);
    }
    schemas[name] = schema;
    return { $ref: `#/components/schemas/${name}` };
  };

  const envelopeName = (opId, schema) => {
    const data = schema.properties?.data;
    if (!data || schema.type !== "object") return null;
    const direct = refName(data);
    if (direct) return `${direct}Response`;
    if (data.type === "array" && refName(data.items)) return `${refName(data.items)}ListResponse`;
    return `${pascal(opId)}Result`;
  };
  /** One shape per name: the envelope's `data` description is that of the first use. */
  const envelope = (opId, schema) => {
    const name = envelopeName(opId, schema);
    if (!name) return null;
    if (schemas[name]) {
      const a = JSON.parse(JSON.stringify(schemas[name]));
      const b = JSON.parse(JSON.stringify(schema));
      delete a.properties.data.description;
      delete b.properties.data.description;
      if (JSON.stringify(a) === JSON.stringify(b)) return { $ref: `#/components/schemas/${name}` };
      return add(`${pascal(opId)}Result`, schema);
    }
    return add(name, schema);
  };

  for (const { op } of operations(doc)) {
    const opId = op.operationId;
    if (!opId) continue;
    for (const [status, response] of Object.entries(op.responses ?? {})) {
      const json = response?.content?.["application/json"];
      if (!json?.schema || json.schema.$ref) continue;
      const schema = json.schema;
      if (status.startsWith("2")) {
        if (Array.isArray(schema.anyOf)) {
          schema.anyOf = schema.anyOf.map((member) =>
            member.type === "object" && member.properties?.data ? (envelope(opId, member) ?? member) : member,
          );
        } else if (schema.type === "object" && schema.properties) {
          json.schema = envelope(opId, schema) ?? add(`${pascal(opId)}Result`, schema);
        }
      } else if (Array.isArray(schema.anyOf) && schema.anyOf.every((m) => refName(m))) {
        const statusName = STATUS_NAMES[status] ?? `Status${status}`;
        json.schema = add(`${pascal(opId)}${statusName}Error`, schema);
      }
    }
  }
  return doc;
}

/**
 * The event payloads as OpenAPI 3.1 `webhooks` (the 3.1 emitter has no webhooks yet,
 * microsoft/typespec#4736). The union marked `x-webhooks: {headers: "<Model>"}` in the spec gives
 * one webhook per member of its discriminator mapping: a POST whose body is that event, with the
 * delivery headers of the named model (which is then removed from the schemas).
 */
export function webhooksFromEvents(doc) {
  const schemas = doc.components?.schemas ?? {};
  for (const [unionName, union] of Object.entries(schemas)) {
    const marker = union["x-webhooks"];
    if (!marker) continue;
    delete union["x-webhooks"];
    const headersModel = schemas[marker.headers];
    if (!headersModel) throw new Error(`x-webhooks of ${unionName}: no schema ${marker.headers}`);
    const required = new Set(headersModel.required ?? []);
    const parameters = Object.entries(headersModel.properties ?? {}).map(([name, schema]) => {
      const { description, ...rest } = schema;
      const { allOf, ...others } = rest;
      // A one-member allOf (how the emitter adds a description to a $ref) as the $ref itself.
      const plain = Array.isArray(allOf) && allOf.length === 1 ? { ...allOf[0], ...others } : rest;
      return { name, in: "header", required: required.has(name), description, schema: plain };
    });
    delete schemas[marker.headers];
    const mapping = union.discriminator?.mapping ?? {};
    doc.webhooks ??= {};
    for (const [eventType, ref] of Object.entries(mapping)) {
      const eventName = ref.split("/").pop();
      const event = schemas[eventName];
      doc.webhooks[eventType] = {
        post: {
          // `lead.created` -> `leadCreatedEvent` (SDK types such as `LeadCreatedEventWebhookRequest`).
          operationId: `${eventType.replace(/[._]([a-z])/g, (_, c) => c.toUpperCase())}Event`,
          summary: `Event ${eventType}`,
          description: `${event?.description ?? ""}\n\n${union.description ?? ""}`.trim(),
          tags: marker.tag ? [marker.tag] : undefined,
          security: [],
          parameters,
          requestBody: { required: true, content: { "application/json": { schema: { $ref: ref } } } },
          responses: {
            200: { description: "Received. Any 2xx answer within 8 seconds counts as delivered." },
          },
        },
      };
      if (!marker.tag) delete doc.webhooks[eventType].post.tags;
    }
  }
  return doc;
}

/**
 * The examples of spec/examples/*.json (one per operation, by operationId; webhooks by theirs):
 * `{summary, request: {path, query, header, body}, response: {status, mediaType, body}}`. The
 * body examples go to `examples` of their media type, parameter values to `example` of their
 * parameter (of the shared component for a `$ref`, once). TypeSpec's `@opExample` would need every
 * required response header in each example; JSON keeps them readable and test/sdk-examples.test.ts
 * checks each against its schema.
 */
export function mergeExamples(doc, examples) {
  const all = [...operations(doc)];
  for (const item of Object.values(doc.webhooks ?? {})) {
    for (const method of HTTP_METHODS) if (item[method]) all.push({ op: item[method] });
  }
  for (const { op } of all) {
    const example = examples[op.operationId];
    if (!example) continue;
    const summary = example.summary ?? op.summary ?? op.operationId;
    const request = example.request ?? {};
    for (const p of op.parameters ?? []) {
      const param = p.$ref ? doc.components?.parameters?.[p.$ref.split("/").pop()] : p;
      const value = param && request[param.in]?.[param.name];
      if (param && value !== undefined && param.example === undefined) param.example = value;
    }
    if (request.body !== undefined && op.requestBody?.content) {
      const [mediaType] = Object.keys(op.requestBody.content);
      op.requestBody.content[mediaType].examples = { [op.operationId]: { summary, value: request.body } };
    }
    const response = example.response;
    const content = response && op.responses?.[String(response.status)]?.content;
    if (content && response.body !== undefined) {
      const mediaType = response.mediaType ?? Object.keys(content)[0];
      if (!content[mediaType]) throw new Error(`example of ${op.operationId}: no ${mediaType} answer`);
      content[mediaType].examples = { [op.operationId]: { summary, value: response.body } };
    }
  }
  return doc;
}

/** Every `#/components/<section>/<name>` that `node` refers to. */
function refsIn(node, out = new Set()) {
  walk(node, (n) => {
    if (typeof n.$ref === "string" && n.$ref.startsWith("#/components/")) out.add(n.$ref);
  });
  return out;
}

/**
 * Removes components nothing refers to (from the paths, webhooks or another used component):
 * the emitter also writes models that only group headers, spread into responses, as empty schemas.
 */
export function pruneUnusedComponents(doc, keep = []) {
  const components = doc.components ?? {};
  const { components: _omit, ...rest } = doc;
  const used = refsIn(rest);
  for (const name of keep) used.add(`#/components/schemas/${name}`);
  const queue = [...used];
  while (queue.length > 0) {
    const ref = queue.pop();
    const [, , section, name] = ref.split("/");
    const target = components[section]?.[name];
    for (const inner of refsIn(target ?? {})) {
      if (!used.has(inner)) {
        used.add(inner);
        queue.push(inner);
      }
    }
  }
  for (const [section, entries] of Object.entries(components)) {
    if (section === "securitySchemes") continue;
    for (const name of Object.keys(entries)) {
      if (!used.has(`#/components/${section}/${name}`)) delete entries[name];
    }
  }
  return doc;
}

/** Sorts the component schemas by name (new ones are appended). */
function sortSchemas(doc) {
  const schemas = doc.components?.schemas;
  if (!schemas) return doc;
  doc.components.schemas = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => (a < b ? -1 : 1)));
  return doc;
}

/** Puts `webhooks` after `paths`, as readers expect. */
function orderTopLevel(doc) {
  const order = ["openapi", "info", "tags", "paths", "webhooks", "components", "servers"];
  const keys = [...order.filter((k) => k in doc), ...Object.keys(doc).filter((k) => !order.includes(k))];
  return Object.fromEntries(keys.map((k) => [k, doc[k]]));
}

/** Every step, in order (`examples`: spec/examples/*.json merged, by operationId). */
export function postProcess(doc, examples = {}) {
  mapsAsAdditionalProperties(doc);
  webhooksFromEvents(doc);
  nameInlineResponses(doc);
  mergeExamples(doc, examples);
  // The events' union goes too: nothing refers to it, and the webhooks name each event.
  pruneUnusedComponents(doc);
  sortSchemas(doc);
  return orderTopLevel(doc);
}
