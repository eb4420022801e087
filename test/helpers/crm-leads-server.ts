import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import { FakeHttpServer } from "./fake-http-server.js";

// A local stand-in for the part of Salesforce's public API the `crm_leads` adapter uses, with the
// real paths and payload shapes: the OAuth 2 token and revoke endpoints of the production login
// host (`/services/oauth2/...`) and of a sandbox one (same paths under `/sandbox`), PKCE (S256)
// checked at the code exchange, and the REST API of the instance: SOQL `query` (Organization, and
// Leads by Email), Lead create / read / update / delete and the describe of Lead, Contact and
// Account. Errors are Salesforce's shapes: `[{message, errorCode, fields}]` and
// `{error, error_description}`.

export interface FakeLead {
  Id: string;
  fields: Record<string, unknown>;
  deleted: boolean;
  createdAt: number;
}

interface Failure {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

const VERSION = "v62.0";

function field(name: string, type = "string", extra: Record<string, unknown> = {}) {
  return {
    name,
    label: name.replace(/([a-z])([A-Z])/g, "$1 $2"),
    type,
    createable: true,
    updateable: true,
    nillable: true,
    defaultedOnCreate: false,
    ...extra,
  };
}

const LEAD_FIELDS = [
  field("Id", "id", { createable: false, updateable: false, nillable: false }),
  field("LastName", "string", { nillable: false }),
  field("FirstName"),
  field("Company", "string", { nillable: false }),
  field("Email", "email"),
  field("Phone", "phone"),
  field("Website", "url"),
  field("Street", "textarea"),
  field("City"),
  field("State"),
  field("PostalCode"),
  field("Country"),
  field("Description", "textarea"),
  field("Industry", "picklist"),
  field("NumberOfEmployees", "int"),
  field("Last_Signal__c", "date"),
  field("Rating__c", "double"),
  field("Address", "address", { createable: false, updateable: false }),
  field("IsConverted", "boolean", {
    createable: false,
    updateable: false,
    nillable: false,
    defaultedOnCreate: true,
  }),
  field("OwnerId", "reference", { nillable: false, defaultedOnCreate: true }),
];
const CONTACT_FIELDS = [field("LastName", "string", { nillable: false }), field("Email", "email")];
const ACCOUNT_FIELDS = [field("Name", "string", { nillable: false }), field("Website", "url")];

export class FakeLeadsCrm extends FakeHttpServer {
  readonly clientId = "leads-client";
  readonly clientSecret = "leads-secret";
  readonly orgs = { production: "00D000000000001AAA", sandbox: "00D000000000002AAA" };
  readonly leads = new Map<string, FakeLead>();
  readonly requests: { method: string; path: string; query: URLSearchParams; body: unknown }[] = [];
  readonly failures: { prefix: string; failure: Failure }[] = [];
  /** Access tokens and the org they belong to. */
  readonly accessTokens = new Map<string, string>();
  readonly refreshTokens = new Map<string, string>();
  readonly revoked: string[] = [];
  private readonly codes = new Map<string, { redirectUri: string; challenge: string | null; org: string }>();
  /** Field names whose values the CRM refuses (a validation rule). */
  readonly refusedFields = new Set<string>();
  private nextId = 1;

  /** The user consents on a login host: a code bound to the redirect URI and the PKCE challenge of the link. */
  issueCode(authorizationUrl: string): string {
    const url = new URL(authorizationUrl);
    const sandbox = url.pathname.startsWith("/sandbox/");
    const code = `sf-code-${randomBytes(6).toString("hex")}`;
    this.codes.set(code, {
      redirectUri: url.searchParams.get("redirect_uri") ?? "",
      challenge: url.searchParams.get("code_challenge"),
      org: sandbox ? this.orgs.sandbox : this.orgs.production,
    });
    return code;
  }

  failNext(prefix: string, failure: Failure): void {
    this.failures.push({ prefix, failure });
  }

  live(): FakeLead[] {
    return [...this.leads.values()].filter((l) => !l.deleted);
  }

  private tokens(org: string, refresh?: string) {
    const access = `00D!sf-at-${randomBytes(8).toString("hex")}`;
    this.accessTokens.set(access, org);
    const answer: Record<string, string> = {
      access_token: access,
      signature: randomBytes(8).toString("base64"),
      scope: "refresh_token api",
      instance_url: this.url,
      id: `${this.url}/id/${org}/005000000000001AAA`,
      token_type: "Bearer",
      issued_at: String(Date.now()),
    };
    if (!refresh) {
      const rt = `sf-rt-${randomBytes(8).toString("hex")}`;
      this.refreshTokens.set(rt, org);
      answer.refresh_token = rt;
    }
    return answer;
  }

  protected handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): void {
    const url = new URL(req.url ?? "/", this.url);
    const path = url.pathname;
    const method = req.method ?? "";
    let body: unknown = raw;
    if ((req.headers["content-type"] ?? "").includes("application/json") && raw) body = JSON.parse(raw);
    this.requests.push({ method, path, query: url.searchParams, body });
    const send = (status: number, payload?: unknown, headers: Record<string, string> = {}) => {
      if (payload === undefined) {
        res.writeHead(status, headers).end();
        return;
      }
      res.writeHead(status, { "content-type": "application/json;charset=UTF-8", ...headers });
      res.end(JSON.stringify(payload));
    };
    const failAt = this.failures.findIndex((f) => path.startsWith(f.prefix));
    if (failAt >= 0) {
      const failure = this.failures.splice(failAt, 1)[0]!.failure;
      return send(failure.status, failure.body, failure.headers);
    }

    const oauth = path.match(/^(\/sandbox)?\/services\/oauth2\/(token|revoke)$/);
    if (oauth && method === "POST") {
      const form = new URLSearchParams(raw);
      if (oauth[2] === "revoke") {
        const token = form.get("token") ?? "";
        this.revoked.push(token);
        this.refreshTokens.delete(token);
        this.accessTokens.delete(token);
        return send(200);
      }
      if (form.get("client_id") !== this.clientId || form.get("client_secret") !== this.clientSecret) {
        return send(400, { error: "invalid_client_id", error_description: "client identifier invalid" });
      }
      const host = oauth[1] ? this.orgs.sandbox : this.orgs.production;
      if (form.get("grant_type") === "authorization_code") {
        const code = this.codes.get(form.get("code") ?? "");
        if (!code || code.redirectUri !== form.get("redirect_uri") || code.org !== host) {
          return send(400, { error: "invalid_grant", error_description: "authentication failure" });
        }
        const verifier = form.get("code_verifier");
        const challenge = verifier ? createHash("sha256").update(verifier).digest("base64url") : null;
        if (code.challenge !== challenge) {
          return send(400, { error: "invalid_grant", error_description: "invalid code verifier" });
        }
        this.codes.delete(form.get("code")!);
        return send(200, this.tokens(code.org));
      }
      if (form.get("grant_type") === "refresh_token") {
        const rt = form.get("refresh_token") ?? "";
        const org = this.refreshTokens.get(rt);
        if (!org || org !== host) {
          return send(400, { error: "invalid_grant", error_description: "expired access/refresh token" });
        }
        return send(200, this.tokens(org, rt));
      }
      return send(400, { error: "unsupported_grant_type", error_description: "grant type not supported" });
    }

    const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    if (!this.accessTokens.has(token)) {
      return send(401, [{ message: "Session expired or invalid", errorCode: "INVALID_SESSION_ID" }]);
    }
    const org = this.accessTokens.get(token)!;
    const base = `/services/data/${VERSION}`;

    if (method === "GET" && path === `${base}/query`) {
      const q = url.searchParams.get("q") ?? "";
      if (/^SELECT Name FROM Organization/i.test(q)) {
        const name = org === this.orgs.sandbox ? "Example Co (Sandbox)" : "Example Co";
        return send(200, {
          totalSize: 1,
          done: true,
          records: [
            { attributes: { type: "Organization", url: `${base}/sobjects/Organization/${org}` }, Name: name },
          ],
        });
      }
      const email = q.match(/Email = '((?:[^'\\]|\\.)*)'/);
      if (/FROM Lead/.test(q) && email) {
        const value = email[1]!.replace(/\\(.)/g, "$1").toLowerCase();
        const found = this.live()
          .filter(
            (l) => String(l.fields.Email ?? "").toLowerCase() === value && l.fields.IsConverted !== true,
          )
          .sort((a, b) => a.createdAt - b.createdAt)
          .slice(0, 1);
        return send(200, {
          totalSize: found.length,
          done: true,
          records: found.map((l) => ({
            attributes: { type: "Lead", url: `${base}/sobjects/Lead/${l.Id}` },
            Id: l.Id,
          })),
        });
      }
      return send(400, [{ message: "unexpected query", errorCode: "MALFORMED_QUERY" }]);
    }

    const describe = path.match(new RegExp(`^${base}/sobjects/(Lead|Contact|Account)/describe$`));
    if (method === "GET" && describe) {
      const fields =
        describe[1] === "Lead" ? LEAD_FIELDS : describe[1] === "Contact" ? CONTACT_FIELDS : ACCOUNT_FIELDS;
      return send(200, { name: describe[1], label: describe[1], createable: true, fields });
    }

    if (method === "POST" && path === `${base}/sobjects/Lead`) {
      const fields = body as Record<string, unknown>;
      const invalid = this.invalid(fields, true);
      if (invalid) return send(400, invalid);
      const id = `00Q${String(this.nextId++).padStart(15, "0")}`;
      this.leads.set(id, {
        Id: id,
        fields: { ...fields, IsConverted: false },
        deleted: false,
        createdAt: Date.now(),
      });
      return send(201, { id, success: true, errors: [] });
    }
    const one = path.match(new RegExp(`^${base}/sobjects/Lead/(\\w+)$`));
    if (one) {
      const lead = this.leads.get(one[1]!);
      if (!lead || lead.deleted) {
        return send(404, [{ message: "The requested resource does not exist", errorCode: "NOT_FOUND" }]);
      }
      if (method === "GET") {
        return send(200, { attributes: { type: "Lead", url: path }, Id: lead.Id, ...lead.fields });
      }
      if (method === "PATCH") {
        const fields = body as Record<string, unknown>;
        const invalid = this.invalid(fields, false);
        if (invalid) return send(400, invalid);
        Object.assign(lead.fields, fields);
        return send(204);
      }
      if (method === "DELETE") {
        lead.deleted = true;
        return send(204);
      }
    }
    send(404, [{ message: `no route ${method} ${path}`, errorCode: "NOT_FOUND" }]);
  }

  private invalid(fields: Record<string, unknown>, creating: boolean) {
    const known = new Map(LEAD_FIELDS.map((f) => [f.name, f]));
    for (const name of Object.keys(fields)) {
      const f = known.get(name);
      if (!f)
        return [{ message: `No such column '${name}' on sobject of type Lead`, errorCode: "INVALID_FIELD" }];
      if (!f.createable) {
        return [
          {
            message: `Unable to create/update fields: ${name}.`,
            errorCode: "INVALID_FIELD_FOR_INSERT_UPDATE",
            fields: [name],
          },
        ];
      }
      if (this.refusedFields.has(name)) {
        return [
          {
            message: `${name}: bad value for restricted picklist field`,
            errorCode: "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST",
            fields: [name],
          },
        ];
      }
    }
    if (creating) {
      const missing = ["LastName", "Company"].filter((n) => !fields[n]);
      if (missing.length > 0) {
        return [
          {
            message: `Required fields are missing: [${missing.join(", ")}]`,
            errorCode: "REQUIRED_FIELD_MISSING",
            fields: missing,
          },
        ];
      }
    }
    return undefined;
  }
}
