import http from "node:http";
import https from "node:https";
import { PassThrough } from "node:stream";
import { Connection, OAuth2 } from "jsforce";
import { StreamPromise } from "jsforce/lib/util/promise.js";
import { Transport } from "jsforce/lib/transport.js";
import type { CrmClientConfig } from "../../config.js";
import { CRM_CALL_TIMEOUT_MS, timed, type CrmEnvironment, type CrmSession } from "./adapter.js";
import { bodyText, CrmApiError, crmMessage, retryAfterFrom } from "./errors.js";

// `crm_leads`: Salesforce's REST API through its official client (`jsforce`). jsforce sends every
// request through a `Transport`; its own uses node-fetch with no agent of ours, retries 429/5xx
// five times with back-off and reads proxy variables from the environment. The adapter gives the
// OAuth2 client and each Connection a transport that sends through the outbound guard's agent,
// once, within the call time limit, and answers a CRM error status as a CrmApiError (with the
// status, Salesforce's message, its answer and a 429's wait) instead of jsforce's status-less one.

/** Salesforce REST API version the adapter speaks. */
export const LEADS_API_VERSION = "62.0";

interface TransportRequest {
  url: string;
  method: string;
  headers?: Record<string, string>;
  body?: unknown;
}

interface TransportResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** One HTTP exchange through the agent (no redirects, no retries). */
function exchange(agent: http.Agent, req: TransportRequest): Promise<TransportResponse> {
  return new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      reject(new CrmApiError(null, `not a URL: ${String(req.url).slice(0, 100)}`));
      return;
    }
    const send = url.protocol === "https:" ? https.request : http.request;
    const body =
      req.body === undefined || req.body === null
        ? undefined
        : typeof req.body === "string" || Buffer.isBuffer(req.body)
          ? req.body
          : JSON.stringify(req.body);
    const request = send(
      url,
      {
        method: req.method,
        agent,
        headers: {
          ...(req.headers ?? {}),
          ...(body !== undefined ? { "content-length": String(Buffer.byteLength(body)) } : {}),
        },
        timeout: CRM_CALL_TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          // A record answer is small; more than 8 MB is not an answer the adapter reads.
          if (size > 8_000_000) request.destroy(new Error("answer larger than 8 MB"));
          else chunks.push(c);
        });
        res.on("end", () => {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined)
              headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
          }
          resolve({ statusCode: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", reject);
      },
    );
    request.on("timeout", () =>
      request.destroy(new Error(`timed out after ${CRM_CALL_TIMEOUT_MS / 1000} s`)),
    );
    request.on("error", (err) => reject(new CrmApiError(null, err.message)));
    if (body !== undefined) request.write(body);
    request.end();
  });
}

function parsed(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/** jsforce's transport over the outbound guard's agent; an error status rejects with a CrmApiError. */
class GuardedTransport extends Transport {
  constructor(private readonly agent: http.Agent) {
    super();
  }

  override httpRequest(req: Parameters<Transport["httpRequest"]>[0]): ReturnType<Transport["httpRequest"]> {
    return StreamPromise.create(() => {
      const stream = new PassThrough();
      const promise = exchange(this.agent, req as TransportRequest).then((res) => {
        if (res.statusCode >= 400) {
          const answer = parsed(res.body);
          throw new CrmApiError(
            res.statusCode,
            crmMessage(answer, `HTTP ${res.statusCode}`),
            bodyText(answer),
            res.statusCode === 429 ? retryAfterFrom(res.headers) : null,
          );
        }
        stream.end(res.body);
        return res;
      });
      promise.catch(() => stream.destroy());
      return { stream, promise };
    }) as ReturnType<Transport["httpRequest"]>;
  }
}

/** Runs one client call within the time limit; failures are CrmApiErrors. */
export async function leadsCall<T>(run: () => PromiseLike<T>): Promise<T> {
  try {
    return await timed(Promise.resolve(run()));
  } catch (err) {
    if (err instanceof CrmApiError) throw err;
    const e = err as { message?: string; errorCode?: string };
    throw new CrmApiError(null, e?.message ?? String(err));
  }
}

/** The login host of an environment: production, or the sandbox one. */
export function loginBase(client: CrmClientConfig, environment: CrmEnvironment): string {
  return environment === "sandbox" ? (client.sandboxAuthBase ?? client.authBase) : client.authBase;
}

/** The client's OAuth2 object of an environment (its authorization and token endpoints on the login host). */
export function leadsOAuth(
  client: CrmClientConfig,
  environment: CrmEnvironment,
  redirectUri: string | undefined,
  agentFor?: (url: string) => http.Agent,
): OAuth2 {
  const base = loginBase(client, environment);
  const oauth = new OAuth2({
    loginUrl: base,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    ...(redirectUri ? { redirectUri } : {}),
  });
  if (agentFor) oauth._transport = new GuardedTransport(agentFor(base));
  return oauth;
}

/** A Connection of an authorized session (no refresh of its own: the caller renews tokens). */
export function leadsConnection(session: Pick<CrmSession, "accessToken" | "apiBase" | "agent">): Connection {
  const conn = new Connection({
    instanceUrl: session.apiBase,
    accessToken: session.accessToken,
    version: LEADS_API_VERSION,
  });
  conn._transport = new GuardedTransport(session.agent);
  return conn;
}
