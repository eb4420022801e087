import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import type { components, operations, webhooks } from "../../generated/api.js";
import type { SpecOperation } from "./spec.js";

/**
 * The types that bind a handler to its contract operation, all derived from `generated/api.ts`
 * (openapi-typescript output of `openapi.yaml`): what a handler receives and what it may answer.
 * A change of the contract that a handler does not follow is a compile error.
 */

/** The events the service sends (the contract's `webhooks`): operations it calls, not serves. */
type WebhookOperation = { [E in keyof webhooks]: webhooks[E]["post"] }[keyof webhooks];

/** Every operationId of the contract's paths (the operations the service serves). */
export type OperationId = {
  [K in keyof operations]: operations[K] extends WebhookOperation ? never : K;
}[keyof operations];

type Op<O extends OperationId> = operations[O];
type Responses<O extends OperationId> = Op<O>["responses"];
/** `{}` for a part the contract does not declare (`path?: never`), else the part itself. */
type Part<T> = [NonNullable<T>] extends [never] ? Record<string, never> : NonNullable<T>;

/** The path parameters of an operation (integers already numbers). */
export type PathOf<O extends OperationId> = Part<Op<O>["parameters"]["path"]>;
/** The query parameters of an operation, as the contract validator coerced them. */
export type QueryOf<O extends OperationId> = Part<Op<O>["parameters"]["query"]>;
/** The request headers the contract declares for an operation (for example `Prefer`). */
export type HeadersOf<O extends OperationId> = Part<Op<O>["parameters"]["header"]>;
/** The JSON request body of an operation; `undefined` for an operation without one. */
export type BodyOf<O extends OperationId> =
  NonNullable<Op<O>["requestBody"]> extends { content: { "application/json": infer B } } ? B : undefined;

/** Every status an operation declares. */
export type StatusOf<O extends OperationId> = keyof Responses<O> & number;
type ContentOf<O extends OperationId, S extends StatusOf<O>> = Responses<O>[S] extends {
  content: infer C;
}
  ? C
  : never;
/** The media types an operation declares for one status. */
export type MediaTypeOf<O extends OperationId, S extends StatusOf<O>> = keyof ContentOf<O, S> & string;
/** The JSON body the contract declares for an operation's answer of one status. */
export type JsonBody<O extends OperationId, S extends StatusOf<O>> =
  ContentOf<O, S> extends {
    "application/json": infer B;
  }
    ? B
    : never;

/** Declared names of a header map, without its `[name: string]: unknown` index signature. */
type KnownKeys<T> = keyof {
  [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K];
};
type HeaderValue<T> = T extends string ? T : T extends number ? number : string;
type ResponseHeaders<O extends OperationId, S extends StatusOf<O>> = Responses<O>[S] extends {
  headers: infer H;
}
  ? H
  : Record<string, never>;
/** Headers a handler may set on an answer: only those the contract declares for that status. */
export type AnswerHeaders<O extends OperationId, S extends StatusOf<O>> = {
  [K in KnownKeys<ResponseHeaders<O, S>>]?: HeaderValue<ResponseHeaders<O, S>[K]>;
};

/** Statuses with a JSON body / with a body that is a file (any other media type). */
export type JsonStatus<O extends OperationId> = {
  [S in StatusOf<O>]: "application/json" extends MediaTypeOf<O, S> ? S : never;
}[StatusOf<O>];
export type FileStatus<O extends OperationId> = {
  [S in StatusOf<O>]: Exclude<MediaTypeOf<O, S>, "application/json"> extends never ? never : S;
}[StatusOf<O>];

/** A file to send as an answer body: opened, with its size (see `FileStorage.open`). */
export interface ServedFile<M extends string = string> {
  /** Name in `Content-Disposition`, for example `leads-main-2026-11-22.csv`. */
  fileName: string;
  contentType: M;
  size: number;
  body: Readable;
}

/** A JSON answer of one of the operation's declared statuses. */
export type JsonAnswer<O extends OperationId> = {
  [S in JsonStatus<O>]: { status: S; body: JsonBody<O, S>; headers?: AnswerHeaders<O, S> };
}[JsonStatus<O>];

/** A file answer of a status whose content is a file (the media type is one the contract lists). */
export type FileAnswer<O extends OperationId> = {
  [S in FileStatus<O>]: { status: S; file: ServedFile<MediaTypeOf<O, S>>; headers?: AnswerHeaders<O, S> };
}[FileStatus<O>];

declare const replayed: unique symbol;
/**
 * A background job's stored answer given back as it was stored (src/jobs): built by the job kind
 * of the same operation when it finished, so it is typed at its source, not here. Only the
 * long-running operations and `getJob` may answer one.
 */
export type ReplayedAnswer = StoredAnswer & { readonly [replayed]: true };

/** A JSON body already serialised, streamed as it is (a job's large answer kept in storage). */
export interface SerialisedJson {
  /** Bytes, when known before it is streamed (then sent as `Content-Length`). */
  size?: number;
  body: Readable;
}

/** An answer as a job stored it: a status, headers and a JSON body (or its serialised text) or a file. */
export type StoredAnswer =
  | { status: number; headers: Record<string, string>; body: unknown }
  | { status: number; headers: Record<string, string>; json: SerialisedJson }
  | { status: number; headers: Record<string, string>; file: ServedFile };

/** Operations whose 202 answer is a running job: the long-running requests. */
export type LongRunningOperationId = {
  [O in OperationId]: 202 extends StatusOf<O>
    ? components["schemas"]["JobAccepted"] extends JsonBody<O, 202>
      ? O
      : never
    : never;
}[OperationId];

/** What a handler returns: a declared status with its body (or file) and declared headers. */
export type Answer<O extends OperationId> =
  JsonAnswer<O> | FileAnswer<O> | (O extends LongRunningOperationId | "getJob" ? ReplayedAnswer : never);

/** The authenticated caller of a keyed operation (see src/auth/middleware.ts). */
export type Caller = KeyCaller | DashboardCaller;

/** A caller with an API key. */
export interface KeyCaller {
  accountId: number;
  keyId: number;
  keyPrefix: string;
  keyName: string;
  /** How the request came: the REST API, or a tool call of the MCP server (src/mcp/). */
  channel: "api" | "mcp";
  sessionId?: undefined;
}

/** A caller signed in to the dashboard (session cookie, src/auth/sessions/): no API key. */
export interface DashboardCaller {
  accountId: number;
  keyId: null;
  keyPrefix: null;
  keyName: null;
  channel: "dashboard";
  /** The session's id (its rate-limit counters are per session, as a key's are per key). */
  sessionId: string;
}

/** The request of one operation, decoded and typed by the contract. */
export interface OperationRequest<O extends OperationId> {
  operation: SpecOperation & { operationId: O };
  params: PathOf<O>;
  query: QueryOf<O>;
  body: BodyOf<O>;
  headers: HeadersOf<O>;
  /** The caller of a keyed operation; reading it in an operation without a key answers 401. */
  readonly caller: Caller;
  /** The HTTP request as it came, for what the typed parts do not carry. */
  http: {
    method: string;
    /** The concrete path, without the query. */
    path: string;
    /** The path with the raw query string (some values are re-read from it, see leads/search). */
    url: string;
    rawHeaders: IncomingHttpHeaders;
    /** When the request arrived (ms since epoch); a long-running request's wait counts from it. */
    arrivedAt: number;
    /** Aborts when the client goes away. */
    signal: AbortSignal;
    /** The raw body bytes, kept only for the operations create-app names (keepRawBody). */
    rawBody: Buffer | undefined;
  };
}

/** The implementation of one operation. Errors are thrown as `ApiError` (src/http/errors.ts). */
export type Handler<O extends OperationId> = (request: OperationRequest<O>) => Promise<Answer<O>>;

/** Marks an operation of the contract that has no implementation yet: it answers 501. */
export const NOT_BUILT = Symbol("not built");
export type NotBuilt = typeof NOT_BUILT;

/** The handlers of some operations (what an area's handler module exports). */
export type Handlers<K extends OperationId> = { [O in K]: Handler<O> };

/** Every operation of the contract: its handler, or explicitly not built. */
export type OperationHandlers = { [O in OperationId]: Handler<O> | NotBuilt };
