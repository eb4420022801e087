import { Client } from "@hubspot/api-client";
import { randomBytes } from "node:crypto";
import type http from "node:http";
import type { CrmClientConfig } from "../../config.js";
import {
  timed,
  type CrmAdapter,
  type CrmMappingTestScope,
  type CrmSession,
  type TokenGrant,
} from "./adapter.js";
import { bodyText, CrmApiError, crmMessage, retryAfterFrom } from "./errors.js";
import { parsedBody, refusedRecordIssues, unlistedFieldWarnings } from "./mapping-issues.js";
import { ownDomain, syntheticLead } from "./lead.js";
import {
  fullMapping,
  SCOPE_LABELS,
  withMapping,
  type CrmField,
  type CrmFieldMapping,
  type CrmFieldMappingEntry,
} from "./mapping.js";

// `crm_contacts`: HubSpot's CRM v3 API through its official client (@hubspot/api-client), pointed
// at the configured base (`CRM_CONTACTS_API_BASE`) with the outbound guard's agent and its own
// retries off (a 429 is the delivery queue's to wait out). HubSpot takes no PKCE.

const SCOPES = [
  "oauth",
  "crm.objects.contacts.read",
  "crm.objects.contacts.write",
  "crm.objects.companies.read",
  "crm.objects.companies.write",
  "crm.schemas.contacts.read",
  "crm.schemas.companies.read",
].join(" ");

type Objects = "contacts" | "companies";

function apiClient(basePath: string, agent: http.Agent, accessToken?: string): Client {
  return new Client({
    basePath,
    httpAgent: agent,
    numberOfApiCallRetries: 0,
    ...(accessToken ? { accessToken } : {}),
  });
}

function sessionClient(session: CrmSession): Client {
  return apiClient(session.apiBase, session.agent, session.accessToken);
}

/** A client exception as a CrmApiError (status, HubSpot's message, its answer, a 429's wait). */
function crmError(err: unknown): CrmApiError {
  if (err instanceof CrmApiError) return err;
  const e = err as { code?: unknown; body?: unknown; headers?: Record<string, string>; message?: string };
  if (typeof e?.code === "number" && e.code >= 100) {
    return new CrmApiError(
      e.code,
      crmMessage(e.body, `HTTP ${e.code}`),
      bodyText(e.body),
      e.code === 429 ? retryAfterFrom(e.headers ?? {}) : null,
    );
  }
  return new CrmApiError(null, e?.message ?? String(err));
}

async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await timed(run());
  } catch (err) {
    throw crmError(err);
  }
}

async function grantFrom(
  run: () => Promise<{ accessToken: string; refreshToken: string; expiresIn: number }>,
  apiBase: string,
): Promise<TokenGrant> {
  const tokens = await call(run);
  return {
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    expiresAt: new Date(Date.now() + tokens.expiresIn * 1000),
    apiBase,
  };
}

/** The first record of a search on one property (EQ), or undefined. */
async function findBy(
  client: Client,
  objects: Objects,
  property: string,
  value: string,
): Promise<string | undefined> {
  const request = {
    filterGroups: [{ filters: [{ propertyName: property, operator: "EQ", value }] }],
    properties: [property],
    limit: 1,
    sorts: ["hs_object_id"],
    after: undefined,
  } as unknown as Parameters<Client["crm"]["contacts"]["searchApi"]["doSearch"]>[0];
  const found = await call(() => client.crm[objects].searchApi.doSearch(request));
  return found.results[0]?.id;
}

/** Updates the matched record or creates one; its id. */
async function upsert(
  client: Client,
  objects: Objects,
  existing: string | undefined,
  properties: Record<string, string>,
): Promise<string> {
  if (existing !== undefined) {
    return (await call(() => client.crm[objects].basicApi.update(existing, { properties }))).id;
  }
  return (await call(() => client.crm[objects].basicApi.create({ properties, associations: [] }))).id;
}

function contactDefaults(v: Record<string, string>): Record<string, string | undefined> {
  return {
    email: v.email,
    phone: v.phone,
    company: v.companyName,
    website: ownDomain(v.website) ? v.website : undefined,
    address: v.address,
    city: v.city,
    state: v.state,
    zip: v.zip,
    country: v.country,
  };
}

function companyDefaults(
  v: Record<string, string>,
  domain: string | undefined,
): Record<string, string | undefined> {
  return {
    name: v.companyName ?? domain,
    domain,
    website: domain ? v.website : undefined,
    phone: v.phone,
    address: v.address,
    city: v.city,
    state: v.state,
    zip: v.zip,
    country: v.country,
    description: v.description,
  };
}

async function propertyList(client: Client, objects: Objects): Promise<CrmField[]> {
  const all = await call(() => client.crm.properties.coreApi.getAll(objects));
  return all.results
    .filter((p) => !p.hidden && !p.calculated && p.modificationMetadata?.readOnlyValue !== true)
    .map((p) => ({ name: p.name, label: p.label, type: p.type, required: false }));
}

/** The problems of a refused synthetic record: one per property HubSpot names, else one for the record. */
function issuesOf(err: CrmApiError, entries: readonly CrmFieldMappingEntry[]): CrmMappingTestScope["issues"] {
  const parsed = parsedBody(err, {}) as {
    errors?: { message?: string; context?: { propertyName?: string[] } }[];
  } | null;
  const named = (parsed?.errors ?? []).flatMap((e) =>
    (e.context?.propertyName ?? []).map((field) => ({ field, message: e.message })),
  );
  return refusedRecordIssues(err, entries, named);
}

async function testScope(
  client: Client,
  objects: Objects,
  scope: "contact" | "company",
  entries: readonly CrmFieldMappingEntry[],
  fields: readonly CrmField[],
  properties: Record<string, string>,
): Promise<CrmMappingTestScope> {
  const issues = unlistedFieldWarnings(entries, fields);
  try {
    const created = await call(() => client.crm[objects].basicApi.create({ properties, associations: [] }));
    try {
      for (const m of entries) {
        const sent = properties[m.targetField];
        const stored = created.properties[m.targetField];
        if (sent !== undefined && stored !== undefined && stored !== null && stored !== sent) {
          issues.push({
            smbFieldId: m.smbFieldId,
            targetField: m.targetField,
            message: `The CRM stored "${stored}" for "${sent}".`,
            severity: "warning",
          });
        }
      }
    } finally {
      await call(() => client.crm[objects].basicApi.archive(created.id));
    }
  } catch (err) {
    const e = crmError(err);
    if (e.statusCode !== 400 && e.statusCode !== 422) throw e;
    issues.push(...issuesOf(e, entries));
  }
  return { scope, label: SCOPE_LABELS[scope], ok: !issues.some((i) => i.severity === "error"), issues };
}

export const contactsAdapter: CrmAdapter = {
  provider: "crm_contacts",
  pkce: false,
  fieldLists: ["contact", "company"],

  authorizationUrl(client, p) {
    const url = new URL(`${client.authBase}/oauth/authorize`);
    url.searchParams.set("client_id", client.clientId);
    url.searchParams.set("redirect_uri", p.redirectUri);
    url.searchParams.set("scope", SCOPES);
    url.searchParams.set("state", p.state);
    return url.toString();
  },

  async exchangeCode(client: CrmClientConfig, agentFor, p) {
    const api = apiClient(client.apiBase, agentFor(client.apiBase));
    const grant = await grantFrom(
      () =>
        api.oauth.tokensApi.create(
          "authorization_code",
          p.code,
          p.redirectUri,
          client.clientId,
          client.clientSecret,
        ),
      client.apiBase,
    );
    const info = await call(() => api.oauth.accessTokensApi.get(grant.accessToken));
    return {
      grant,
      account: {
        externalAccountId: String(info.hubId),
        displayName: info.hubDomain ? `Contacts CRM (${info.hubDomain})` : `Contacts CRM ${info.hubId}`,
        metadata: { hubDomain: info.hubDomain ?? null, user: info.user ?? null },
      },
    };
  },

  async refresh(client, agentFor, p) {
    const api = apiClient(client.apiBase, agentFor(client.apiBase));
    return grantFrom(
      () =>
        api.oauth.tokensApi.create(
          "refresh_token",
          undefined,
          undefined,
          client.clientId,
          client.clientSecret,
          p.refreshToken,
        ),
      client.apiBase,
    );
  },

  async revoke(client, agentFor, p) {
    const api = apiClient(client.apiBase, agentFor(client.apiBase));
    await call(() => api.oauth.refreshTokensApi.archive(p.refreshToken));
  },

  async loadFieldLists(session) {
    const client = sessionClient(session);
    const [contact, company] = await Promise.all([
      propertyList(client, "contacts"),
      propertyList(client, "companies"),
    ]);
    return { contact, company };
  },

  async write(session, lead, stored) {
    const client = sessionClient(session);
    const mapping = fullMapping("crm_contacts", stored as Record<string, unknown>);
    const v = lead.values;
    const domain = ownDomain(v.website);
    let companyId: string | undefined;
    if (domain || v.companyName) {
      const existing = domain
        ? await findBy(client, "companies", "domain", domain)
        : await findBy(client, "companies", "name", v.companyName!);
      const properties = withMapping(companyDefaults(v, domain), mapping.company ?? [], v);
      companyId = await upsert(client, "companies", existing, properties);
    }
    let contactId: string | undefined;
    if (v.email) {
      const existing = await findBy(client, "contacts", "email", v.email);
      const properties = withMapping(contactDefaults(v), mapping.contact ?? [], v);
      contactId = await upsert(client, "contacts", existing, properties);
      if (companyId !== undefined) {
        const [c, co] = [contactId, companyId];
        await call(() => client.crm.associations.v4.basicApi.createDefault("contacts", c, "companies", co));
      }
    }
    if (contactId === undefined && companyId === undefined) return { result: null };
    return {
      result: {
        ...(contactId !== undefined ? { contactId } : {}),
        ...(companyId !== undefined ? { companyId } : {}),
      },
    };
  },

  async dryRun(session, stored: CrmFieldMapping, lists) {
    const client = sessionClient(session);
    const mapping = fullMapping("crm_contacts", stored as Record<string, unknown>);
    const lead = syntheticLead(randomBytes(4).toString("hex"));
    const v = lead.values;
    const contact = withMapping({ email: v.email }, mapping.contact ?? [], v);
    const company = withMapping({ name: v.companyName }, mapping.company ?? [], v);
    return [
      await testScope(client, "contacts", "contact", mapping.contact ?? [], lists.contact ?? [], contact),
      await testScope(client, "companies", "company", mapping.company ?? [], lists.company ?? [], company),
    ];
  },
};
