import { randomBytes } from "node:crypto";
import http from "node:http";
import { FakeHttpServer } from "./fake-http-server.js";

// A local stand-in for the part of Pipedrive's public API the `crm_deals` adapter uses, with the
// real paths and payload shapes: the OAuth token endpoint (authorization code and refresh, client
// credentials as HTTP Basic, `api_domain` in the answer), `/api/v1/users/me`, v2 persons,
// organizations and deals (search, list, create, update, delete), v2 field lists (cursor paged)
// and adding a person field, v2 pipelines and stages, and v1 notes.

type Kind = "persons" | "organizations" | "deals" | "notes";
type FieldScope = "personFields" | "organizationFields" | "dealFields";

export interface DealsRecord {
  id: number;
  data: Record<string, unknown>;
  deleted: boolean;
}

interface Failure {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface FieldDef {
  field_name: string;
  field_code: string;
  field_type: string;
  is_custom_field: boolean;
  is_optional_response_field: boolean;
}

function std(field_code: string, field_name: string, field_type = "varchar"): FieldDef {
  return { field_code, field_name, field_type, is_custom_field: false, is_optional_response_field: false };
}

export function customCode(): string {
  return randomBytes(20).toString("hex");
}

export class FakeDealsCrm extends FakeHttpServer {
  readonly clientId = "deals-client";
  readonly clientSecret = "deals-secret";
  readonly companyId = 777;
  readonly records: Record<Kind, Map<number, DealsRecord>> = {
    persons: new Map(),
    organizations: new Map(),
    deals: new Map(),
    notes: new Map(),
  };
  readonly fields: Record<FieldScope, FieldDef[]> = {
    personFields: [
      std("name", "Name"),
      std("emails", "Email", "varchar"),
      std("phones", "Phone", "phone"),
      std("org_id", "Organization", "org"),
      std("job_title", "Job title"),
      { ...std(customCode(), "Lead source detail", "varchar"), is_custom_field: true },
      { ...std(customCode(), "Employees", "double"), is_custom_field: true },
      { ...std(customCode(), "Favourite colour", "enum"), is_custom_field: true },
    ],
    organizationFields: [
      std("name", "Name"),
      std("address", "Address", "address"),
      std("website", "Website"),
      std("owner_id", "Owner", "user"),
      { ...std(customCode(), "Industry note", "text"), is_custom_field: true },
    ],
    dealFields: [
      std("title", "Title"),
      std("value", "Value", "monetary"),
      std("stage_id", "Stage", "stage"),
      std("expected_close_date", "Expected close date", "date"),
      { ...std(customCode(), "Lead category", "varchar"), is_custom_field: true },
    ],
  };
  readonly pipelines = [
    { id: 1, name: "Sales", order_nr: 1, is_deleted: false },
    { id: 2, name: "Partners", order_nr: 2, is_deleted: false },
  ];
  readonly stages = [
    { id: 12, name: "Contacted", order_nr: 2, pipeline_id: 1, is_deleted: false },
    { id: 11, name: "Qualified", order_nr: 1, pipeline_id: 1, is_deleted: false },
    { id: 21, name: "Intro", order_nr: 1, pipeline_id: 2, is_deleted: false },
  ];
  readonly requests: { method: string; path: string; query: URLSearchParams; body: unknown }[] = [];
  readonly failures: { prefix: string; failure: Failure }[] = [];
  readonly accessTokens = new Map<string, number>();
  readonly refreshTokens = new Set<string>();
  readonly revoked: string[] = [];
  private readonly codes = new Map<string, string>();
  expiresInSeconds = 3599;
  /** Field codes whose values the CRM refuses (a 400). */
  readonly refusedFields = new Set<string>();
  /** Page size of field lists (to exercise cursors). */
  fieldPageSize = 4;
  private nextId = 1000;

  issueCode(redirectUri: string): string {
    const code = `code-${randomBytes(6).toString("hex")}`;
    this.codes.set(code, redirectUri);
    return code;
  }

  failNext(prefix: string, failure: Failure): void {
    this.failures.push({ prefix, failure });
  }

  live(kind: Kind): DealsRecord[] {
    return [...this.records[kind].values()].filter((r) => !r.deleted);
  }

  /** The code of the custom person field of this name. */
  personFieldCode(name: string): string | undefined {
    return this.fields.personFields.find((f) => f.field_name === name)?.field_code;
  }

  private tokens() {
    const access = `pd-at-${randomBytes(8).toString("hex")}`;
    const refresh = `pd-rt-${randomBytes(8).toString("hex")}`;
    this.accessTokens.set(access, Date.now() + this.expiresInSeconds * 1000);
    this.refreshTokens.add(refresh);
    return {
      access_token: access,
      token_type: "Bearer",
      expires_in: this.expiresInSeconds,
      refresh_token: refresh,
      scope: "base,deals:full,contacts:full,admin",
      api_domain: this.url,
    };
  }

  protected handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): void {
    const url = new URL(req.url ?? "/", this.url);
    const path = url.pathname;
    const method = req.method ?? "";
    let body: unknown = raw;
    if ((req.headers["content-type"] ?? "").includes("application/json") && raw) body = JSON.parse(raw);
    this.requests.push({ method, path, query: url.searchParams, body });
    const send = (status: number, payload?: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(payload === undefined ? "" : JSON.stringify(payload));
    };
    const failAt = this.failures.findIndex((f) => path.startsWith(f.prefix));
    if (failAt >= 0) {
      const failure = this.failures.splice(failAt, 1)[0]!.failure;
      return send(failure.status, failure.body, failure.headers);
    }

    if (path === "/oauth/token" || path === "/oauth/revoke") {
      const basic = Buffer.from(`${this.clientId}:${this.clientSecret}`).toString("base64");
      if (method !== "POST" || req.headers.authorization !== `Basic ${basic}`) {
        return send(401, { success: false, message: "Invalid client credentials", error: "invalid_client" });
      }
      const form = new URLSearchParams(raw);
      if (path === "/oauth/revoke") {
        const token = form.get("token") ?? "";
        this.revoked.push(token);
        this.refreshTokens.delete(token);
        this.accessTokens.delete(token);
        return send(200, {});
      }
      if (form.get("grant_type") === "authorization_code") {
        const code = form.get("code") ?? "";
        if (this.codes.get(code) !== form.get("redirect_uri")) {
          return send(400, { success: false, message: "Invalid grant", error: "invalid_grant" });
        }
        this.codes.delete(code);
        return send(200, this.tokens());
      }
      if (form.get("grant_type") === "refresh_token") {
        const refresh = form.get("refresh_token") ?? "";
        if (!this.refreshTokens.has(refresh)) {
          return send(400, { success: false, message: "Invalid refresh token", error: "invalid_grant" });
        }
        return send(200, { ...this.tokens(), refresh_token: refresh });
      }
      return send(400, {
        success: false,
        message: "Unsupported grant type",
        error: "unsupported_grant_type",
      });
    }

    const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    const expires = this.accessTokens.get(token);
    if (expires === undefined || expires < Date.now()) {
      return send(401, {
        success: false,
        error: "unauthorized access",
        errorCode: 401,
        error_info: "Please check developers.pipedrive.com",
      });
    }
    const ok = (data: unknown, additional: unknown = null) =>
      send(200, { success: true, data, ...(additional ? { additional_data: additional } : {}) });
    const bad = (error: string) => send(400, { success: false, error, error_info: "", data: null });

    if (method === "GET" && path === "/api/v1/users/me") {
      return ok({
        id: 9,
        name: "Owner",
        email: "owner@example.com",
        company_id: this.companyId,
        company_name: "Example Deals Co",
        company_domain: "exampledeals",
      });
    }

    const fieldList = path.match(/^\/api\/v2\/(personFields|organizationFields|dealFields)$/);
    if (fieldList) {
      const scope = fieldList[1] as FieldScope;
      if (method === "GET") {
        const start = Number(url.searchParams.get("cursor") ?? "0");
        const size = Math.min(this.fieldPageSize, Number(url.searchParams.get("limit") ?? "100"));
        const page = this.fields[scope].slice(start, start + size);
        const next = start + size < this.fields[scope].length ? String(start + size) : null;
        return ok(page, { next_cursor: next });
      }
      if (method === "POST") {
        const b = body as { field_name?: string; field_type?: string };
        if (!b.field_name || !b.field_type) return bad("field_name and field_type are required");
        const field = { ...std(customCode(), b.field_name, b.field_type), is_custom_field: true };
        this.fields[scope].push(field);
        return ok(field);
      }
    }

    if (method === "GET" && path === "/api/v2/pipelines") return ok(this.pipelines, { next_cursor: null });
    if (method === "GET" && path === "/api/v2/stages") return ok(this.stages, { next_cursor: null });

    const search = path.match(/^\/api\/v2\/(persons|organizations)\/search$/);
    if (method === "GET" && search) {
      const kind = search[1] as Kind;
      const term = (url.searchParams.get("term") ?? "").toLowerCase();
      const field = url.searchParams.get("fields");
      const exact = url.searchParams.get("exact_match") === "true";
      const matches = (value: unknown) => {
        const text = String(value ?? "").toLowerCase();
        return exact ? text === term : text.includes(term);
      };
      const found = this.live(kind).filter((r) => {
        if (field === "name") return matches(r.data.name);
        if (field === "email") {
          return ((r.data.emails as { value: string }[] | undefined) ?? []).some((e) => matches(e.value));
        }
        if (field === "custom_fields") {
          return Object.values((r.data.custom_fields as Record<string, unknown>) ?? {}).some(matches);
        }
        return false;
      });
      const limit = Number(url.searchParams.get("limit") ?? "100");
      return ok(
        {
          items: found.slice(0, limit).map((r) => ({
            result_score: 1,
            item: {
              id: r.id,
              type: kind === "persons" ? "person" : "organization",
              name: r.data.name,
              ...(kind === "persons"
                ? { emails: ((r.data.emails as { value: string }[]) ?? []).map((e) => e.value) }
                : {}),
              custom_fields: Object.values((r.data.custom_fields as Record<string, unknown>) ?? {}).map(
                String,
              ),
            },
          })),
        },
        { next_cursor: null },
      );
    }

    const collection = path.match(/^\/api\/(v1|v2)\/(persons|organizations|deals|notes)$/);
    if (collection) {
      const kind = collection[2] as Kind;
      if (method === "GET" && kind === "deals") {
        const q = url.searchParams;
        const found = this.live("deals").filter(
          (d) =>
            (!q.get("person_id") || d.data.person_id === Number(q.get("person_id"))) &&
            (!q.get("pipeline_id") || d.data.pipeline_id === Number(q.get("pipeline_id"))) &&
            (!q.get("status") || d.data.status === q.get("status")),
        );
        return ok(
          found.slice(0, Number(q.get("limit") ?? "100")).map((d) => this.shape(d)),
          { next_cursor: null },
        );
      }
      if (method === "POST") {
        const data = body as Record<string, unknown>;
        const invalid = this.invalid(kind, data, true);
        if (invalid) return bad(invalid);
        const record: DealsRecord = { id: this.nextId++, data: this.normalize(kind, data), deleted: false };
        this.records[kind].set(record.id, record);
        return ok(this.shape(record));
      }
    }
    const one = path.match(/^\/api\/(v1|v2)\/(persons|organizations|deals|notes)\/(\d+)$/);
    if (one) {
      const kind = one[2] as Kind;
      const record = this.records[kind].get(Number(one[3]));
      if (!record || record.deleted) return send(404, { success: false, error: "Not found", data: null });
      if (method === "GET") return ok(this.shape(record));
      if (method === "PATCH" || method === "PUT") {
        const data = body as Record<string, unknown>;
        const invalid = this.invalid(kind, data, false);
        if (invalid) return bad(invalid);
        const normalized = this.normalize(kind, data);
        const custom = {
          ...((record.data.custom_fields as Record<string, unknown>) ?? {}),
          ...((normalized.custom_fields as Record<string, unknown>) ?? {}),
        };
        Object.assign(record.data, normalized, { custom_fields: custom });
        return ok(this.shape(record));
      }
      if (method === "DELETE") {
        record.deleted = true;
        return ok({ id: record.id });
      }
    }
    send(404, { success: false, error: `no route ${method} ${path}`, data: null });
  }

  private scopeOf(kind: Kind): FieldScope | undefined {
    if (kind === "persons") return "personFields";
    if (kind === "organizations") return "organizationFields";
    if (kind === "deals") return "dealFields";
    return undefined;
  }

  private invalid(kind: Kind, data: Record<string, unknown>, creating: boolean): string | undefined {
    if (kind === "notes")
      return typeof data.content === "string" && data.content ? undefined : "content is required";
    if (creating && kind === "deals" && !data.title) return "title is required";
    if (creating && kind !== "deals" && !data.name) return "name is required";
    const scope = this.scopeOf(kind)!;
    const custom = (data.custom_fields as Record<string, unknown>) ?? {};
    for (const code of Object.keys(custom)) {
      if (!this.fields[scope].some((f) => f.field_code === code)) return `Unknown custom field: ${code}`;
    }
    for (const code of [...Object.keys(custom), ...Object.keys(data)]) {
      if (this.refusedFields.has(code)) return `Invalid value for field ${code}`;
    }
    return undefined;
  }

  private normalize(kind: Kind, data: Record<string, unknown>): Record<string, unknown> {
    const out = { ...data };
    if (kind === "deals" && out.status === undefined) out.status = "open";
    if (kind === "deals" && out.stage_id !== undefined && out.pipeline_id === undefined) {
      out.pipeline_id = this.stages.find((s) => s.id === out.stage_id)?.pipeline_id ?? 1;
    }
    if (kind === "deals" && out.pipeline_id === undefined) out.pipeline_id = 1;
    return out;
  }

  private shape(record: DealsRecord) {
    const now = new Date().toISOString();
    return { id: record.id, ...record.data, add_time: now, update_time: now, is_deleted: false };
  }
}
