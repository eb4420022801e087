import { randomBytes } from "node:crypto";
import type { CrmAdapter, CrmMappingTestScope, CrmSession, DealSettings } from "./adapter.js";
import { CrmApiError } from "./errors.js";
import { unlistedFieldWarnings } from "./mapping-issues.js";
import { dealsCall, dealsGrant, dealsOAuth, sessionApis, type DealsApis } from "./deals-client.js";
import { syntheticLead, type CrmLead } from "./lead.js";
import {
  fullMapping,
  SCOPE_LABELS,
  type CrmField,
  type CrmFieldMapping,
  type CrmFieldMappingEntry,
} from "./mapping.js";

// `crm_deals` (Pipedrive): Organizations matched by exact name, Persons by the service's lead id
// (a custom person field the adapter adds at connect) then by e-mail, a note with the lead id on
// each delivery, and, when `dealSettings.createDeals`, one open Deal per Person (updated on later
// deliveries). Pipedrive takes no PKCE. docs/integrations.md, "CRMs".

/** Name of the custom person field holding the service's lead id. */
export const LEAD_ID_FIELD_NAME = "SMB lead id";

type Scope = "person" | "organization" | "deal";

/** Custom field types whose values are written as text, numbers or dates. */
const WRITABLE_CUSTOM = new Set(["varchar", "varchar_auto", "text", "phone", "double", "date"]);

/** Standard fields a mapping may target, per scope, and how each is written. */
const STANDARD: Record<Scope, Record<string, "text" | "number" | "date" | "address">> = {
  person: { name: "text", job_title: "text" },
  organization: { name: "text", website: "text", address: "address" },
  deal: { title: "text", value: "number", expected_close_date: "date" },
};

/** Fields Pipedrive requires on new records. */
const REQUIRED: Record<Scope, string> = { person: "name", organization: "name", deal: "title" };

/** Pipedrive's custom field codes are 40 hex digits. */
function isCustomCode(code: string): boolean {
  return /^[0-9a-f]{40}$/.test(code);
}

interface FieldRow {
  field_name: string;
  field_code: string;
  field_type: string;
  is_custom_field: boolean;
}

interface Paged<T> {
  data?: T[] | null;
  additional_data?: { next_cursor?: string | null } | null;
}

/** Every page of a cursor-paged list (at most 20 pages of 500). */
async function allPages<T>(load: (cursor: string | undefined) => Promise<Paged<T>>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page += 1) {
    const answer = await dealsCall(() => load(cursor));
    out.push(...(answer.data ?? []));
    cursor = answer.additional_data?.next_cursor ?? undefined;
    if (!cursor) break;
  }
  return out;
}

async function fieldRows(apis: DealsApis, scope: Scope): Promise<FieldRow[]> {
  const load = (cursor: string | undefined): Promise<Paged<FieldRow>> => {
    const p = { limit: 500, ...(cursor ? { cursor } : {}) };
    if (scope === "person") return apis.personFields.getPersonFields(p) as Promise<Paged<FieldRow>>;
    if (scope === "organization")
      return apis.organizationFields.getOrganizationFields(p) as Promise<Paged<FieldRow>>;
    return apis.dealFields.getDealFields(p) as Promise<Paged<FieldRow>>;
  };
  return allPages(load);
}

/** The fields of a scope a mapping may target: writable custom fields and the supported standard ones. */
async function fieldList(apis: DealsApis, scope: Scope): Promise<CrmField[]> {
  const rows = await fieldRows(apis, scope);
  return rows
    .filter((f) =>
      f.is_custom_field && isCustomCode(f.field_code)
        ? WRITABLE_CUSTOM.has(f.field_type)
        : STANDARD[scope][f.field_code] !== undefined,
    )
    .map((f) => ({
      name: f.field_code,
      label: f.field_name,
      type: f.field_type,
      required: REQUIRED[scope] === f.field_code,
    }));
}

/** The key of the lead-id person field, added when the account has none. */
async function ensureLeadIdField(apis: DealsApis): Promise<string> {
  const rows = await fieldRows(apis, "person");
  const found = rows.find((f) => f.is_custom_field && f.field_name === LEAD_ID_FIELD_NAME);
  if (found) return found.field_code;
  const created = (await dealsCall(() =>
    apis.personFields.addPersonField({
      AddPersonFieldRequest: { field_name: LEAD_ID_FIELD_NAME, field_type: "varchar" },
    }),
  )) as { data?: { field_code?: string } };
  const code = created.data?.field_code;
  if (!code) throw new CrmApiError(null, "the CRM did not answer the new lead id field's key");
  return code;
}

function leadIdFieldOf(session: CrmSession): string | undefined {
  const key = session.metadata.leadIdField;
  return typeof key === "string" && key ? key : undefined;
}

/** A value as the field's kind takes it; undefined when it cannot be written. */
function valueFor(kind: "text" | "number" | "date" | "address", value: string): unknown {
  if (kind === "number") {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  if (kind === "date") {
    const time = Date.parse(value);
    return Number.isNaN(time) ? undefined : new Date(time).toISOString().slice(0, 10);
  }
  if (kind === "address") return { value };
  return value;
}

/** A record body: defaults, then each mapped lead field (standard fields top level, custom ones in `custom_fields`). */
function recordBody(
  scope: Scope,
  defaults: Record<string, unknown>,
  entries: readonly CrmFieldMappingEntry[],
  values: Record<string, string>,
  fieldTypes: ReadonlyMap<string, string>,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(defaults)) if (value !== undefined) body[name] = value;
  const custom: Record<string, unknown> = { ...((body.custom_fields as Record<string, unknown>) ?? {}) };
  for (const entry of entries) {
    const raw = values[entry.smbFieldId];
    if (raw === undefined) continue;
    const standard = STANDARD[scope][entry.targetField];
    if (standard !== undefined) {
      const value = valueFor(standard, raw);
      if (value !== undefined) body[entry.targetField] = value;
    } else if (isCustomCode(entry.targetField)) {
      const type = fieldTypes.get(entry.targetField);
      const value = valueFor(type === "double" ? "number" : type === "date" ? "date" : "text", raw);
      if (value !== undefined) custom[entry.targetField] = value;
    }
  }
  if (Object.keys(custom).length > 0) body.custom_fields = custom;
  else delete body.custom_fields;
  return body;
}

function addressOf(v: Record<string, string>): string | undefined {
  const parts = [v.address, v.city, [v.state, v.zip].filter(Boolean).join(" "), v.country].filter(
    (p): p is string => typeof p === "string" && p !== "",
  );
  return parts.length > 0 ? parts.join(", ") : undefined;
}

function personName(lead: CrmLead): string {
  const v = lead.values;
  return v.companyName ?? v.email ?? v.phone ?? (lead.id !== undefined ? `Lead ${lead.id}` : "Unknown");
}

interface SearchAnswer {
  data?: { items?: { item?: { id?: number; name?: string } }[] } | null;
}

async function findOrganization(apis: DealsApis, name: string): Promise<number | undefined> {
  const found = (await dealsCall(() =>
    apis.organizations.searchOrganization({ term: name, fields: "name", exact_match: true, limit: 100 }),
  )) as SearchAnswer;
  return (found.data?.items ?? []).find((i) => i.item?.name === name)?.item?.id;
}

async function findPersonByLeadId(
  apis: DealsApis,
  leadId: number,
  fieldKey: string,
): Promise<number | undefined> {
  const term = String(leadId);
  const found = (await dealsCall(() =>
    apis.persons.searchPersons({ term, fields: "custom_fields", exact_match: true, limit: 10 }),
  )) as SearchAnswer;
  // The search matches any custom field: the lead id field itself must hold the id.
  for (const hit of (found.data?.items ?? []).slice(0, 3)) {
    const id = hit.item?.id;
    if (id === undefined) continue;
    const person = (await dealsCall(() => apis.persons.getPerson({ id }))) as {
      data?: { custom_fields?: Record<string, unknown> | null };
    };
    if (String(person.data?.custom_fields?.[fieldKey] ?? "") === term) return id;
  }
  return undefined;
}

async function findPersonByEmail(apis: DealsApis, email: string): Promise<number | undefined> {
  const found = (await dealsCall(() =>
    apis.persons.searchPersons({ term: email, fields: "email", exact_match: true, limit: 1 }),
  )) as SearchAnswer;
  return found.data?.items?.[0]?.item?.id;
}

type IdAnswer = { data?: { id?: number } | null };

function idOf(answer: unknown, what: string): number {
  const id = (answer as IdAnswer).data?.id;
  if (typeof id !== "number") throw new CrmApiError(null, `the CRM answered no id for the ${what}`);
  return id;
}

/** One open Deal per Person (in the chosen pipeline): its id, or undefined. */
async function openDealOf(
  apis: DealsApis,
  personId: number,
  settings: DealSettings,
): Promise<number | undefined> {
  const found = (await dealsCall(() =>
    apis.deals.getDeals({
      person_id: personId,
      status: "open",
      limit: 1,
      ...(settings.pipelineId !== null ? { pipeline_id: settings.pipelineId } : {}),
    }),
  )) as { data?: { id?: number }[] | null };
  return found.data?.[0]?.id;
}

function noteText(lead: CrmLead): string {
  const v = lead.values;
  const what =
    lead.id !== undefined
      ? `Lead id ${lead.id} delivered by the lead service.`
      : "Lead delivered by the lead service from the account's own data (no lead id).";
  const lines = [
    what,
    v.website ? `Website: ${v.website}` : undefined,
    v.category ? `Category: ${v.category}` : undefined,
    v.buyingSignalType ? `Buying signals: ${v.buyingSignalType}` : undefined,
  ].filter(Boolean);
  return lines.join("<br>");
}

/** Types of custom fields by code, for the values they take. */
function typesOf(lists: Record<string, CrmField[]>): Map<string, string> {
  return new Map(Object.values(lists).flatMap((l) => l.map((f) => [f.name, f.type] as const)));
}

async function loadLists(apis: DealsApis): Promise<Record<Scope, CrmField[]>> {
  const [person, organization, deal] = await Promise.all([
    fieldList(apis, "person"),
    fieldList(apis, "organization"),
    fieldList(apis, "deal"),
  ]);
  return { person, organization, deal };
}

/** Writes one lead: Organization, Person, optional Deal, then the note. */
async function writeLead(
  session: CrmSession,
  lead: CrmLead,
  stored: CrmFieldMapping,
  settings: DealSettings | null,
  cachedLists: Record<string, CrmField[]>,
): Promise<void> {
  const apis = sessionApis(session);
  const mapping = fullMapping("crm_deals", stored as Record<string, unknown>);
  const v = lead.values;
  const mapped = [...(mapping.person ?? []), ...(mapping.organization ?? []), ...(mapping.deal ?? [])];
  // Types of mapped custom fields: from the cached lists, loaded only when one is missing there.
  let types = typesOf(cachedLists);
  if (mapped.some((m) => isCustomCode(m.targetField) && !types.has(m.targetField))) {
    types = typesOf(await loadLists(apis));
  }

  let orgId: number | undefined;
  if (v.companyName) {
    const existing = await findOrganization(apis, v.companyName);
    const address = addressOf(v);
    const body = recordBody(
      "organization",
      { name: v.companyName, ...(address ? { address: { value: address } } : {}) },
      mapping.organization ?? [],
      v,
      types,
    );
    orgId =
      existing !== undefined
        ? idOf(
            await dealsCall(() =>
              apis.organizations.updateOrganization({ id: existing, UpdateOrganizationRequest: body }),
            ),
            "Organization",
          )
        : idOf(
            await dealsCall(() =>
              apis.organizations.addOrganization({
                AddOrganizationRequest: body as { name: string },
              }),
            ),
            "Organization",
          );
  }

  const leadIdField =
    lead.id !== undefined && lead.id > 0
      ? (leadIdFieldOf(session) ?? (await ensureLeadIdField(apis)))
      : undefined;
  let personId =
    leadIdField !== undefined ? await findPersonByLeadId(apis, lead.id!, leadIdField) : undefined;
  if (personId === undefined && v.email) personId = await findPersonByEmail(apis, v.email);
  const personDefaults: Record<string, unknown> = {
    name: personName(lead),
    ...(v.email ? { emails: [{ value: v.email, primary: true, label: "work" }] } : {}),
    ...(v.phone ? { phones: [{ value: v.phone, primary: true, label: "work" }] } : {}),
    ...(orgId !== undefined ? { org_id: orgId } : {}),
    ...(leadIdField !== undefined ? { custom_fields: { [leadIdField]: String(lead.id) } } : {}),
  };
  const personBody = recordBody("person", personDefaults, mapping.person ?? [], v, types);
  const pid = personId;
  personId =
    pid !== undefined
      ? idOf(
          await dealsCall(() => apis.persons.updatePerson({ id: pid, UpdatePersonRequest: personBody })),
          "Person",
        )
      : idOf(await dealsCall(() => apis.persons.addPerson({ AddPersonRequest: personBody })), "Person");

  let dealId: number | undefined;
  if (settings?.createDeals) {
    const person = personId;
    const existing = await openDealOf(apis, person, settings);
    const dealBody = recordBody(
      "deal",
      {
        title: `${personName(lead)}${lead.id !== undefined ? ` (lead ${lead.id})` : ""}`,
        person_id: person,
        ...(orgId !== undefined ? { org_id: orgId } : {}),
        ...(settings.stageId !== null
          ? { stage_id: settings.stageId }
          : settings.pipelineId !== null
            ? { pipeline_id: settings.pipelineId }
            : {}),
      },
      mapping.deal ?? [],
      v,
      types,
    );
    if (existing !== undefined) {
      // A later delivery updates the open Deal; its stage stays where the team moved it.
      delete dealBody.stage_id;
      delete dealBody.pipeline_id;
      dealId = idOf(
        await dealsCall(() => apis.deals.updateDeal({ id: existing, UpdateDealRequest: dealBody })),
        "Deal",
      );
    } else {
      dealId = idOf(
        await dealsCall(() => apis.deals.addDeal({ AddDealRequest: dealBody as { title: string } })),
        "Deal",
      );
    }
  }

  const note = {
    content: noteText(lead),
    person_id: personId,
    ...(orgId !== undefined ? { org_id: orgId } : {}),
    ...(dealId !== undefined ? { deal_id: dealId } : {}),
  };
  await dealsCall(() => apis.notes.addNote({ AddNoteRequest: note }));
}

/** Pipelines with their stages in order. */
export async function listPipelines(
  session: CrmSession,
): Promise<
  { id: number; name: string; active: boolean; stages: { id: number; name: string; orderNr: number }[] }[]
> {
  const apis = sessionApis(session);
  type Row = { id?: number; name?: string; order_nr?: number; is_deleted?: boolean; pipeline_id?: number };
  const [pipelines, stages] = await Promise.all([
    allPages<Row>(
      (cursor) =>
        apis.pipelines.getPipelines({ limit: 500, ...(cursor ? { cursor } : {}) }) as Promise<Paged<Row>>,
    ),
    allPages<Row>(
      (cursor) => apis.stages.getStages({ limit: 500, ...(cursor ? { cursor } : {}) }) as Promise<Paged<Row>>,
    ),
  ]);
  const byOrder = (a: Row, b: Row) => (a.order_nr ?? 0) - (b.order_nr ?? 0) || (a.id ?? 0) - (b.id ?? 0);
  return pipelines
    .filter((p) => typeof p.id === "number")
    .sort(byOrder)
    .map((p) => ({
      id: p.id!,
      name: p.name ?? "",
      active: p.is_deleted !== true,
      stages: stages
        .filter((s) => s.pipeline_id === p.id && typeof s.id === "number" && s.is_deleted !== true)
        .sort(byOrder)
        .map((s) => ({ id: s.id!, name: s.name ?? "", orderNr: s.order_nr ?? 0 })),
    }));
}

/** The dry run of one scope: a synthetic record created, compared and deleted. */
async function testScope(
  scope: Scope,
  entries: readonly CrmFieldMappingEntry[],
  fields: readonly CrmField[],
  create: () => Promise<{ id: number; stored: Record<string, unknown> }>,
  sent: Record<string, unknown>,
): Promise<{ result: CrmMappingTestScope; id?: number }> {
  const issues = unlistedFieldWarnings(entries, fields);
  let id: number | undefined;
  try {
    const created = await create();
    id = created.id;
    const sentCustom = (sent.custom_fields ?? {}) as Record<string, unknown>;
    const storedCustom = (created.stored.custom_fields ?? {}) as Record<string, unknown>;
    for (const m of entries) {
      const custom = isCustomCode(m.targetField);
      const was = custom ? sentCustom[m.targetField] : sent[m.targetField];
      const now = custom ? storedCustom[m.targetField] : created.stored[m.targetField];
      if (was === undefined || now === undefined || now === null) continue;
      if (JSON.stringify(now) !== JSON.stringify(was)) {
        issues.push({
          smbFieldId: m.smbFieldId,
          targetField: m.targetField,
          message: `The CRM stored ${JSON.stringify(now)} for ${JSON.stringify(was)}.`,
          severity: "warning",
        });
      }
    }
  } catch (err) {
    const e = err instanceof CrmApiError ? err : new CrmApiError(null, String(err));
    if (e.statusCode !== 400 && e.statusCode !== 422) throw e;
    const named = entries.find((m) => e.message.includes(m.targetField));
    issues.push({
      smbFieldId: named?.smbFieldId ?? null,
      targetField: named?.targetField ?? null,
      message: e.message,
      severity: "error",
    });
  }
  return {
    result: { scope, label: SCOPE_LABELS[scope], ok: !issues.some((i) => i.severity === "error"), issues },
    ...(id !== undefined ? { id } : {}),
  };
}

function createdOf(answer: unknown, what: string): { id: number; stored: Record<string, unknown> } {
  const data = (answer as { data?: Record<string, unknown> | null }).data ?? {};
  return { id: idOf(answer, what), stored: data };
}

export const dealsAdapter: CrmAdapter = {
  provider: "crm_deals",
  pkce: false,
  fieldLists: ["person", "organization", "deal"],

  authorizationUrl(client, p) {
    const url = new URL(dealsOAuth(client, p.redirectUri).authorizationUrl);
    url.searchParams.set("state", p.state);
    return url.toString();
  },

  async exchangeCode(client, agentFor, p) {
    const oauth = dealsOAuth(client, p.redirectUri, agentFor);
    const grant = dealsGrant(await dealsCall(() => oauth.authorize(p.code)), client.apiBase);
    await p.checkApiBase(grant.apiBase);
    const apis = sessionApis({
      accessToken: grant.accessToken,
      apiBase: grant.apiBase,
      agent: agentFor(grant.apiBase),
      metadata: {},
    });
    const me = (await dealsCall(() => apis.users.getCurrentUser())) as {
      data?: { company_id?: number; company_name?: string; company_domain?: string } | null;
    };
    const companyId = me.data?.company_id;
    if (companyId === undefined) throw new CrmApiError(null, "the CRM did not name the company");
    const leadIdField = await ensureLeadIdField(apis);
    const companyName = me.data?.company_name;
    return {
      grant,
      account: {
        externalAccountId: String(companyId),
        displayName: companyName ? `Deals CRM (${companyName})` : `Deals CRM ${companyId}`,
        metadata: {
          apiDomain: grant.apiBase,
          companyDomain: me.data?.company_domain ?? null,
          leadIdField,
        },
      },
    };
  },

  async refresh(client, agentFor, p) {
    // The redirect URI is not sent on a refresh; the client only requires one to be set.
    const oauth = dealsOAuth(client, `${client.authBase}/`, agentFor);
    oauth.updateToken({ refresh_token: p.refreshToken } as Parameters<typeof oauth.updateToken>[0]);
    const grant = dealsGrant(await dealsCall(() => oauth.tokenRefresh()), p.apiBase);
    if (grant.apiBase !== p.apiBase) await p.checkApiBase(grant.apiBase);
    return grant;
  },

  async revoke(client, agentFor, p) {
    const oauth = dealsOAuth(client, `${client.authBase}/`, agentFor);
    oauth.updateToken({ refresh_token: p.refreshToken } as Parameters<typeof oauth.updateToken>[0]);
    await dealsCall(() => oauth.revokeToken("refresh_token"));
  },

  async loadFieldLists(session) {
    return loadLists(sessionApis(session));
  },

  async write(session, lead, mapping, dealSettings, cachedLists) {
    await writeLead(session, lead, mapping, dealSettings, cachedLists ?? {});
    return { result: null };
  },

  async dryRun(session, stored, lists) {
    const apis = sessionApis(session);
    const mapping = fullMapping("crm_deals", stored as Record<string, unknown>);
    const v = syntheticLead(randomBytes(4).toString("hex")).values;
    const types = typesOf(lists);
    const orgBody = recordBody("organization", { name: v.companyName }, mapping.organization ?? [], v, types);
    const personBody = recordBody(
      "person",
      { name: v.companyName, emails: [{ value: v.email, primary: true, label: "work" }] },
      mapping.person ?? [],
      v,
      types,
    );
    const dealBody = recordBody("deal", { title: v.companyName }, mapping.deal ?? [], v, types);
    const created: { remove: () => Promise<unknown> }[] = [];
    let outcome: { scopes: CrmMappingTestScope[] } | { failure: unknown };
    try {
      const org = await testScope(
        "organization",
        mapping.organization ?? [],
        lists.organization ?? [],
        async () =>
          createdOf(
            await dealsCall(() =>
              apis.organizations.addOrganization({ AddOrganizationRequest: orgBody as { name: string } }),
            ),
            "Organization",
          ),
        orgBody,
      );
      if (org.id !== undefined) {
        const id = org.id;
        created.push({ remove: () => dealsCall(() => apis.organizations.deleteOrganization({ id })) });
      }
      const person = await testScope(
        "person",
        mapping.person ?? [],
        lists.person ?? [],
        async () =>
          createdOf(
            await dealsCall(() =>
              apis.persons.addPerson({
                AddPersonRequest: { ...personBody, ...(org.id !== undefined ? { org_id: org.id } : {}) },
              }),
            ),
            "Person",
          ),
        personBody,
      );
      if (person.id !== undefined) {
        const id = person.id;
        created.push({ remove: () => dealsCall(() => apis.persons.deletePerson({ id })) });
      }
      const deal = await testScope(
        "deal",
        mapping.deal ?? [],
        lists.deal ?? [],
        async () =>
          createdOf(
            await dealsCall(() =>
              apis.deals.addDeal({
                AddDealRequest: {
                  ...(dealBody as { title: string }),
                  ...(person.id !== undefined ? { person_id: person.id } : {}),
                  ...(org.id !== undefined ? { org_id: org.id } : {}),
                },
              }),
            ),
            "Deal",
          ),
        dealBody,
      );
      if (deal.id !== undefined) {
        const id = deal.id;
        created.push({ remove: () => dealsCall(() => apis.deals.deleteDeal({ id })) });
      }
      outcome = { scopes: [person.result, org.result, deal.result] };
    } catch (err) {
      outcome = { failure: err };
    }
    // Deal, then Person, then Organization: each removed even when an earlier removal failed.
    let failure: unknown = "failure" in outcome ? outcome.failure : undefined;
    for (const record of created.reverse()) {
      try {
        await record.remove();
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined || !("scopes" in outcome)) throw failure;
    return outcome.scopes;
  },
};
