import { randomBytes } from "node:crypto";
import type { Connection } from "jsforce";
import type { CrmAdapter, CrmEnvironment, CrmMappingTestScope, TokenGrant } from "./adapter.js";
import { CrmApiError } from "./errors.js";
import { parsedBody, refusedRecordIssues, unlistedFieldWarnings } from "./mapping-issues.js";
import { leadsCall, leadsConnection, leadsOAuth } from "./leads-client.js";
import { syntheticLead, type CrmLead } from "./lead.js";
import { fullMapping, SCOPE_LABELS, type CrmField, type CrmFieldMappingEntry } from "./mapping.js";

// `crm_leads` (Salesforce): Leads matched by Email (unconverted ones), a new Lead each time for a
// lead without e-mail, Company 'Unknown' when the lead has no company name. Authorization code
// with PKCE (S256) on the production or sandbox login host. docs/integrations.md, "CRMs".

/** Salesforce answers no token lifetime; its default session timeout (a shorter one is caught by the 401 renewal). */
const ASSUMED_TOKEN_LIFETIME_MS = 2 * 60 * 60_000;

/** Field types a mapping may target and how values are written. */
const WRITABLE: Record<string, "text" | "number" | "date" | "datetime"> = {
  string: "text",
  textarea: "text",
  phone: "text",
  email: "text",
  url: "text",
  picklist: "text",
  combobox: "text",
  double: "number",
  int: "number",
  currency: "number",
  percent: "number",
  date: "date",
  datetime: "datetime",
};

interface DescribeField {
  name: string;
  label: string;
  type: string;
  createable: boolean;
  updateable: boolean;
  nillable: boolean;
  defaultedOnCreate: boolean;
}

type Values = Record<string, string | number>;

function environmentOf(metadata: Record<string, unknown>): CrmEnvironment {
  return metadata.environment === "sandbox" ? "sandbox" : "production";
}

interface SalesforceTokens {
  access_token?: string;
  refresh_token?: string;
  instance_url?: string;
  id?: string;
  issued_at?: string;
}

function grantOf(
  tokens: SalesforceTokens,
  refreshToken: string | undefined,
  fallbackBase: string,
): TokenGrant {
  const refresh = tokens.refresh_token ?? refreshToken;
  if (!tokens.access_token || !refresh) {
    throw new CrmApiError(null, "the CRM's token answer has no access or refresh token");
  }
  let apiBase = fallbackBase;
  if (tokens.instance_url) {
    try {
      const url = new URL(tokens.instance_url);
      if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("not http");
      apiBase = url.origin;
    } catch {
      throw new CrmApiError(null, "the CRM named an instance URL that is not a URL");
    }
  }
  const issued = Number(tokens.issued_at);
  const from = Number.isFinite(issued) && issued > 0 && issued <= Date.now() + 60_000 ? issued : Date.now();
  return {
    accessToken: tokens.access_token,
    refreshToken: refresh,
    expiresAt: new Date(from + ASSUMED_TOKEN_LIFETIME_MS),
    apiBase,
  };
}

async function describeFields(conn: Connection, object: "Lead" | "Contact" | "Account"): Promise<CrmField[]> {
  const described = (await leadsCall(() => conn.sobject(object).describe())) as unknown as {
    fields?: DescribeField[];
  };
  return (described.fields ?? [])
    .filter((f) => f.createable && f.updateable && WRITABLE[f.type] !== undefined)
    .map((f) => ({
      name: f.name,
      label: f.label,
      type: f.type,
      required: !f.nillable && !f.defaultedOnCreate,
    }));
}

function valueFor(kind: "text" | "number" | "date" | "datetime", value: string): string | number | undefined {
  if (kind === "number") {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  if (kind === "date" || kind === "datetime") {
    const time = Date.parse(value);
    if (Number.isNaN(time)) return undefined;
    const iso = new Date(time).toISOString();
    return kind === "date" ? iso.slice(0, 10) : iso;
  }
  return value;
}

/** The Lead's fields: defaults, then each mapped lead field converted to its field's type. */
function leadRecord(
  defaults: Record<string, string | undefined>,
  entries: readonly CrmFieldMappingEntry[],
  values: Record<string, string>,
  types: ReadonlyMap<string, string>,
): Values {
  const out: Values = {};
  for (const [name, value] of Object.entries(defaults)) if (value !== undefined) out[name] = value;
  for (const entry of entries) {
    const raw = values[entry.smbFieldId];
    if (raw === undefined) continue;
    const value = valueFor(WRITABLE[types.get(entry.targetField) ?? "string"] ?? "text", raw);
    if (value !== undefined) out[entry.targetField] = value;
  }
  return out;
}

function leadDefaults(lead: CrmLead, creating: boolean): Record<string, string | undefined> {
  const v = lead.values;
  return {
    // A new Lead needs a last name and a company; an update keeps the names the team may have edited.
    LastName: creating ? (v.companyName ?? "Unknown") : undefined,
    Company: creating ? (v.companyName ?? "Unknown") : v.companyName,
    Email: v.email,
    Phone: v.phone,
    Website: v.website,
    Street: v.address,
    City: v.city,
    State: v.state,
    PostalCode: v.zip,
    Country: v.country,
    Description: v.description,
  };
}

function typesOf(lists: Record<string, CrmField[]>): Map<string, string> {
  return new Map((lists.lead ?? []).map((f) => [f.name, f.type] as const));
}

/** An unconverted Lead with this e-mail (the oldest), or undefined. */
async function findByEmail(conn: Connection, email: string): Promise<string | undefined> {
  const rows = (await leadsCall(() =>
    conn.sobject("Lead").find({ Email: email, IsConverted: false }, ["Id"]).sort({ CreatedDate: 1 }).limit(1),
  )) as { Id?: string }[];
  return rows[0]?.Id;
}

function savedId(result: unknown): string {
  const r = result as { id?: string; success?: boolean; errors?: { message?: string }[] };
  if (!r?.success || !r.id) {
    throw new CrmApiError(null, r?.errors?.[0]?.message ?? "the CRM did not save the Lead");
  }
  return r.id;
}

/** Problems of a refused synthetic Lead: one per field Salesforce names, else one for the record. */
function issuesOf(err: CrmApiError, entries: readonly CrmFieldMappingEntry[]): CrmMappingTestScope["issues"] {
  const parsed = parsedBody(err, []);
  const errors = (Array.isArray(parsed) ? parsed : [parsed]) as ({
    message?: string;
    fields?: string[];
  } | null)[];
  const named = errors.flatMap((e) => (e?.fields ?? []).map((field) => ({ field, message: e?.message })));
  return refusedRecordIssues(err, entries, named);
}

export const leadsAdapter: CrmAdapter = {
  provider: "crm_leads",
  pkce: true,
  fieldLists: ["lead", "contact", "account"],

  authorizationUrl(client, p) {
    const oauth = leadsOAuth(client, p.environment, p.redirectUri);
    return oauth.getAuthorizationUrl({
      scope: "api refresh_token",
      state: p.state,
      ...(p.codeChallenge ? { code_challenge: p.codeChallenge } : {}),
    });
  },

  async exchangeCode(client, agentFor, p) {
    const oauth = leadsOAuth(client, p.environment, p.redirectUri, agentFor);
    const tokens = (await leadsCall(() =>
      oauth.requestToken(p.code, p.codeVerifier ? { code_verifier: p.codeVerifier } : {}),
    )) as SalesforceTokens;
    const grant = grantOf(tokens, undefined, client.apiBase);
    await p.checkApiBase(grant.apiBase);
    // The identity URL names the org and the user: `<login host>/id/<org id>/<user id>`.
    const [orgId, userId] = (tokens.id ?? "").split("/").slice(-2);
    if (!orgId) throw new CrmApiError(null, "the CRM did not name the organization");
    const conn = leadsConnection({ ...grant, agent: agentFor(grant.apiBase) });
    // The org's name only labels the integration: a user who may not read Organization still connects.
    const name = await leadsCall(() =>
      conn.query<{ Name?: string }>("SELECT Name FROM Organization LIMIT 1"),
    ).then(
      (org) => (org as { records?: { Name?: string }[] }).records?.[0]?.Name,
      (err: unknown) => {
        if (
          err instanceof CrmApiError &&
          err.statusCode !== null &&
          err.statusCode >= 400 &&
          err.statusCode < 500
        )
          return undefined;
        throw err;
      },
    );
    const label = p.environment === "sandbox" ? "Leads CRM sandbox" : "Leads CRM";
    return {
      grant,
      account: {
        externalAccountId: orgId,
        displayName: name ? `${label} (${name})` : `${label} ${orgId}`,
        metadata: { instanceUrl: grant.apiBase, userId: userId ?? null },
      },
    };
  },

  async refresh(client, agentFor, p) {
    const oauth = leadsOAuth(client, environmentOf(p.metadata), undefined, agentFor);
    const tokens = (await leadsCall(() => oauth.refreshToken(p.refreshToken))) as SalesforceTokens;
    const grant = grantOf(tokens, p.refreshToken, p.apiBase);
    if (grant.apiBase !== p.apiBase) await p.checkApiBase(grant.apiBase);
    return grant;
  },

  async revoke(client, agentFor, p) {
    const oauth = leadsOAuth(client, environmentOf(p.metadata), undefined, agentFor);
    await leadsCall(() => oauth.revokeToken(p.refreshToken));
  },

  async loadFieldLists(session) {
    const conn = leadsConnection(session);
    const [lead, contact, account] = await Promise.all([
      describeFields(conn, "Lead"),
      describeFields(conn, "Contact"),
      describeFields(conn, "Account"),
    ]);
    return { lead, contact, account };
  },

  async write(session, lead, stored, _dealSettings, cachedLists) {
    const conn = leadsConnection(session);
    const mapping = fullMapping("crm_leads", stored as Record<string, unknown>).lead ?? [];
    let types = typesOf(cachedLists ?? {});
    if (mapping.some((m) => !types.has(m.targetField))) {
      types = new Map((await describeFields(conn, "Lead")).map((f) => [f.name, f.type] as const));
    }
    const existing = lead.values.email ? await findByEmail(conn, lead.values.email) : undefined;
    if (existing !== undefined) {
      const record = leadRecord(leadDefaults(lead, false), mapping, lead.values, types);
      await leadsCall(() => conn.sobject("Lead").update({ Id: existing, ...record }));
      return { result: { leadId: existing } };
    }
    const record = leadRecord(leadDefaults(lead, true), mapping, lead.values, types);
    const leadId = savedId(await leadsCall(() => conn.sobject("Lead").create(record)));
    return { result: { leadId } };
  },

  async dryRun(session, stored, lists) {
    const conn = leadsConnection(session);
    const entries = fullMapping("crm_leads", stored as Record<string, unknown>).lead ?? [];
    const lead = syntheticLead(randomBytes(4).toString("hex"));
    const sent = leadRecord(
      { LastName: lead.values.companyName, Company: lead.values.companyName, Email: lead.values.email },
      entries,
      lead.values,
      typesOf(lists),
    );
    const issues = unlistedFieldWarnings(entries, lists.lead ?? []);
    let id: string | undefined;
    try {
      id = savedId(await leadsCall(() => conn.sobject("Lead").create(sent)));
      const created = id;
      const read = (await leadsCall(() => conn.sobject("Lead").retrieve(created))) as unknown as Record<
        string,
        unknown
      >;
      for (const m of entries) {
        const was = sent[m.targetField];
        const now = read[m.targetField];
        if (was === undefined || now === undefined || now === null) continue;
        if (String(now) !== String(was)) {
          issues.push({
            smbFieldId: m.smbFieldId,
            targetField: m.targetField,
            message: `The CRM stored "${String(now)}" for "${String(was)}".`,
            severity: "warning",
          });
        }
      }
    } catch (err) {
      const e = err instanceof CrmApiError ? err : new CrmApiError(null, String(err));
      if (id !== undefined || (e.statusCode !== 400 && e.statusCode !== 422)) {
        if (id !== undefined) {
          const created = id;
          await leadsCall(() => conn.sobject("Lead").destroy(created)).catch(() => undefined);
        }
        throw e;
      }
      issues.push(...issuesOf(e, entries));
    }
    if (id !== undefined) {
      const created = id;
      await leadsCall(() => conn.sobject("Lead").destroy(created));
    }
    return [
      { scope: "lead", label: SCOPE_LABELS.lead, ok: !issues.some((i) => i.severity === "error"), issues },
    ];
  },
};
