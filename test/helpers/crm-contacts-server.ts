import { randomBytes } from "node:crypto";
import http from "node:http";
import { FakeHttpServer } from "./fake-http-server.js";

// A local stand-in for the part of HubSpot's public API the `crm_contacts` adapter uses, with
// the real paths and payload shapes: the OAuth token endpoint (authorization code and refresh),
// the access-token info, CRM v3 objects (search, create, update, archive) for contacts and
// companies, the v4 default association and the v3 property lists.

type Objects = "contacts" | "companies";

export interface FakeRecord {
  id: string;
  properties: Record<string, string>;
  archived: boolean;
}

interface Failure {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface RecordedRequest {
  method: string;
  path: string;
  body: unknown;
  authorization: string | undefined;
}

const CONTACT_PROPS = [
  "email",
  "firstname",
  "lastname",
  "phone",
  "company",
  "website",
  "address",
  "city",
  "state",
  "zip",
  "country",
  "jobtitle",
  "lifecyclestage",
  "leadsource_detail",
];
const COMPANY_PROPS = [
  "name",
  "domain",
  "website",
  "phone",
  "address",
  "city",
  "state",
  "zip",
  "country",
  "description",
  "industry_note",
];

function property(name: string) {
  return {
    name,
    label: name.charAt(0).toUpperCase() + name.slice(1),
    type: "string",
    fieldType: "text",
    description: "",
    groupName: "contactinformation",
    options: [],
    hidden: false,
    calculated: false,
    modificationMetadata: { archivable: true, readOnlyDefinition: true, readOnlyValue: false },
  };
}

export class FakeContactsCrm extends FakeHttpServer {
  readonly clientId = "contacts-client";
  readonly clientSecret = "contacts-secret";
  readonly hubId = 4242;
  readonly records: Record<Objects, Map<string, FakeRecord>> = { contacts: new Map(), companies: new Map() };
  readonly associations: [string, string][] = [];
  readonly requests: RecordedRequest[] = [];
  /** Answers given instead of the next requests whose path starts with the key. */
  readonly failures: { prefix: string; failure: Failure }[] = [];
  /** Access tokens and their expiry (ms); refresh tokens. */
  readonly accessTokens = new Map<string, number>();
  readonly refreshTokens = new Set<string>();
  /** Refresh tokens revoked (DELETE /oauth/v1/refresh-tokens/{token}). */
  readonly revoked: string[] = [];
  private readonly codes = new Map<string, string>();
  expiresInSeconds = 1800;
  /** Property names the CRM refuses values of (a validation error). */
  readonly refusedProperties = new Set<string>();
  private nextId = 100;

  /** The user consents: a code for this redirect URI. */
  issueCode(redirectUri: string): string {
    const code = `code-${randomBytes(6).toString("hex")}`;
    this.codes.set(code, redirectUri);
    return code;
  }

  failNext(prefix: string, failure: Failure): void {
    this.failures.push({ prefix, failure });
  }

  live(objects: Objects): FakeRecord[] {
    return [...this.records[objects].values()].filter((r) => !r.archived);
  }

  private tokens() {
    const access = `at-${randomBytes(8).toString("hex")}`;
    const refresh = `rt-${randomBytes(8).toString("hex")}`;
    this.accessTokens.set(access, Date.now() + this.expiresInSeconds * 1000);
    this.refreshTokens.add(refresh);
    return {
      token_type: "bearer",
      access_token: access,
      refresh_token: refresh,
      expires_in: this.expiresInSeconds,
    };
  }

  protected handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): void {
    const url = new URL(req.url ?? "/", this.url);
    const path = url.pathname;
    let body: unknown = raw;
    if ((req.headers["content-type"] ?? "").includes("application/json") && raw) body = JSON.parse(raw);
    this.requests.push({ method: req.method ?? "", path, body, authorization: req.headers.authorization });
    const send = (status: number, payload?: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json;charset=utf-8", ...headers });
      res.end(payload === undefined ? "" : JSON.stringify(payload));
    };
    const failAt = this.failures.findIndex((f) => path.startsWith(f.prefix));
    if (failAt >= 0) {
      const failure = this.failures.splice(failAt, 1)[0]!.failure;
      send(failure.status, failure.body, failure.headers);
      return;
    }

    if (req.method === "POST" && path === "/oauth/v1/token") {
      const form = new URLSearchParams(raw);
      if (form.get("client_id") !== this.clientId || form.get("client_secret") !== this.clientSecret) {
        return send(400, { status: "BAD_CLIENT_ID", message: "missing or invalid client_id" });
      }
      if (form.get("grant_type") === "authorization_code") {
        const code = form.get("code") ?? "";
        if (this.codes.get(code) !== form.get("redirect_uri")) {
          return send(400, { status: "BAD_AUTH_CODE", message: "missing or unknown auth code" });
        }
        this.codes.delete(code);
        return send(200, this.tokens());
      }
      if (form.get("grant_type") === "refresh_token") {
        const refresh = form.get("refresh_token") ?? "";
        if (!this.refreshTokens.has(refresh)) {
          return send(400, { status: "BAD_REFRESH_TOKEN", message: "missing or unknown refresh token" });
        }
        return send(200, { ...this.tokens(), refresh_token: refresh });
      }
      return send(400, { status: "BAD_GRANT_TYPE", message: "unknown grant_type" });
    }
    const revoke = path.match(/^\/oauth\/v1\/refresh-tokens\/(.+)$/);
    if (req.method === "DELETE" && revoke) {
      if (!this.refreshTokens.delete(decodeURIComponent(revoke[1]!))) {
        return send(404, { status: "error", message: "refresh token not found" });
      }
      this.revoked.push(decodeURIComponent(revoke[1]!));
      res.writeHead(204).end();
      return;
    }
    const info = path.match(/^\/oauth\/v1\/access-tokens\/(.+)$/);
    if (req.method === "GET" && info) {
      if (!this.accessTokens.has(info[1]!)) return send(404, { status: "error", message: "not found" });
      return send(200, {
        token: info[1],
        user: "owner@example.com",
        hub_domain: "example-portal.com",
        scopes: ["oauth", "crm.objects.contacts.write"],
        hub_id: this.hubId,
        app_id: 77,
        expires_in: 1700,
        user_id: 9,
        token_type: "access",
      });
    }

    const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    const expires = this.accessTokens.get(token);
    if (expires === undefined || expires < Date.now()) {
      return send(401, {
        status: "error",
        message: "Authentication credentials not found.",
        category: "INVALID_AUTHENTICATION",
      });
    }

    const props = path.match(/^\/crm\/v3\/properties\/(contacts|companies)$/);
    if (req.method === "GET" && props) {
      const names = props[1] === "contacts" ? CONTACT_PROPS : COMPANY_PROPS;
      const hidden = {
        ...property("hs_object_id"),
        modificationMetadata: { archivable: false, readOnlyDefinition: true, readOnlyValue: true },
      };
      return send(200, { results: [...names.map(property), hidden] });
    }
    const search = path.match(/^\/crm\/v3\/objects\/(contacts|companies)\/search$/);
    if (req.method === "POST" && search) {
      const filter = (
        body as { filterGroups: { filters: { propertyName: string; operator: string; value: string }[] }[] }
      ).filterGroups[0]!.filters[0]!;
      const found = this.live(search[1] as Objects).filter(
        (r) =>
          filter.operator === "EQ" &&
          (r.properties[filter.propertyName] ?? "").toLowerCase() === filter.value.toLowerCase(),
      );
      return send(200, { total: found.length, results: found.slice(0, 1).map((r) => this.shape(r)) });
    }
    const create = path.match(/^\/crm\/v3\/objects\/(contacts|companies)$/);
    if (req.method === "POST" && create) {
      const objects = create[1] as Objects;
      const properties = (body as { properties: Record<string, string> }).properties;
      const invalid = this.invalid(objects, properties);
      if (invalid) return send(400, invalid);
      const record: FakeRecord = {
        id: String(this.nextId++),
        properties: { ...properties },
        archived: false,
      };
      this.records[objects].set(record.id, record);
      return send(201, this.shape(record));
    }
    const one = path.match(/^\/crm\/v3\/objects\/(contacts|companies)\/(\d+)$/);
    if (one) {
      const objects = one[1] as Objects;
      const record = this.records[objects].get(one[2]!);
      if (!record || record.archived)
        return send(404, { status: "error", message: "Object not found", category: "OBJECT_NOT_FOUND" });
      if (req.method === "PATCH") {
        const properties = (body as { properties: Record<string, string> }).properties;
        const invalid = this.invalid(objects, properties);
        if (invalid) return send(400, invalid);
        Object.assign(record.properties, properties);
        return send(200, this.shape(record));
      }
      if (req.method === "DELETE") {
        record.archived = true;
        res.writeHead(204).end();
        return;
      }
    }
    const assoc = path.match(
      /^\/crm\/v4\/objects\/contacts\/(\d+)\/associations\/default\/companies\/(\d+)$/,
    );
    if (req.method === "PUT" && assoc) {
      this.associations.push([assoc[1]!, assoc[2]!]);
      const now = new Date().toISOString();
      return send(200, {
        status: "COMPLETE",
        results: [
          {
            from: { id: assoc[1] },
            to: { id: assoc[2] },
            associationSpec: { associationCategory: "HUBSPOT_DEFINED", associationTypeId: 279 },
          },
        ],
        startedAt: now,
        completedAt: now,
      });
    }
    send(404, { status: "error", message: `no route ${req.method} ${path}` });
  }

  private invalid(objects: Objects, properties: Record<string, string>) {
    const known = objects === "contacts" ? CONTACT_PROPS : COMPANY_PROPS;
    const bad = Object.keys(properties).filter((n) => !known.includes(n) || this.refusedProperties.has(n));
    if (bad.length === 0) return undefined;
    return {
      status: "error",
      message: "Property values were not valid",
      correlationId: "c0ffee",
      category: "VALIDATION_ERROR",
      errors: bad.map((name) => ({
        message: known.includes(name)
          ? `"${properties[name]}" is not a valid value for ${name}`
          : `Property "${name}" does not exist`,
        code: known.includes(name) ? "INVALID_OPTION" : "PROPERTY_DOESNT_EXIST",
        context: { propertyName: [name] },
      })),
    };
  }

  private shape(record: FakeRecord) {
    const now = new Date().toISOString();
    return { id: record.id, properties: record.properties, createdAt: now, updatedAt: now, archived: false };
  }
}
