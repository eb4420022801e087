import type { components } from "../../../generated/api.js";
import { errors, type ErrorDetail } from "../../http/errors.js";
import { isCrmProvider, type CrmProviderId } from "../providers.js";
import { getIntegration } from "../service.js";
import { openCrm, withSession, type OpenCrm } from "./access.js";
import { crmUnavailable, usableCrm } from "./availability.js";
import { CrmApiError, providerError } from "./errors.js";
import { isSmbField, SMB_FIELDS } from "./lead.js";
import {
  fullMapping,
  SCOPES,
  type CrmField,
  type CrmFieldMapping,
  type CrmFieldMappingEntry,
} from "./mapping.js";
import { cachedFieldLists, saveFieldMapping, storeFieldLists } from "./repository.js";
import type { CrmRuntime } from "./runtime.js";

type Schemas = components["schemas"];

/** CRM field lists are read again after 10 minutes. */
export const FIELD_LIST_TTL_MS = 10 * 60_000;

/**
 * The account's CRM integration ready to use: 404 when not the account's, 400 `bad_request` when
 * not a CRM (or not `only`), 503 `provider_unavailable` when the CRM is not configured here.
 */
export async function crmIntegrationOf(
  runtime: CrmRuntime,
  accountId: number,
  id: number,
  only?: CrmProviderId,
): Promise<OpenCrm & { provider: CrmProviderId }> {
  const integration = await getIntegration(runtime.db, accountId, id);
  const provider = integration.provider;
  if (!isCrmProvider(provider)) {
    throw errors.badRequest("This route is for CRM integrations; this integration is a webhook.");
  }
  if (only !== undefined && provider !== only) {
    throw errors.badRequest(`This route is for ${only} integrations; this integration is ${provider}.`);
  }
  if (!usableCrm(runtime.config, provider)) throw crmUnavailable(provider);
  const open = await openCrm(runtime, id, provider);
  if (!open) throw crmUnavailable(provider);
  return { ...open, provider };
}

/** A CRM call of these routes: its failure is 502 `provider_error`. */
export async function crmCall<T>(
  runtime: CrmRuntime,
  open: OpenCrm,
  use: Parameters<typeof withSession<T>>[2],
): Promise<T> {
  try {
    return await withSession(runtime, open, use);
  } catch (err) {
    if (err instanceof CrmApiError) throw providerError(err);
    throw err;
  }
}

/** The CRM's field lists, from the cache when loaded in the last 10 minutes (unless `refresh`). */
export async function fieldLists(
  runtime: CrmRuntime,
  open: OpenCrm,
  refresh: boolean,
): Promise<{ lists: Record<string, CrmField[]>; cachedAt: Date }> {
  const id = open.connection.integrationId;
  const cached = await cachedFieldLists(runtime.db, id);
  const names = open.adapter.fieldLists;
  const now = Date.now();
  if (!refresh && names.every((n) => (cached.get(n)?.cachedAt.getTime() ?? 0) > now - FIELD_LIST_TTL_MS)) {
    const lists = Object.fromEntries(names.map((n) => [n, cached.get(n)!.fields]));
    const cachedAt = new Date(Math.min(...names.map((n) => cached.get(n)!.cachedAt.getTime())));
    return { lists, cachedAt };
  }
  const lists = await crmCall(runtime, open, (session) => open.adapter.loadFieldLists(session));
  const cachedAt = new Date();
  await storeFieldLists(runtime.db, id, lists, cachedAt);
  return { lists, cachedAt };
}

/** `GET .../field-mapping`: the shape of the integration's CRM. */
export async function getFieldMapping(
  runtime: CrmRuntime,
  accountId: number,
  id: number,
  refresh: boolean,
): Promise<Schemas["CrmFieldMappingInfo"]> {
  const open = await crmIntegrationOf(runtime, accountId, id);
  const { lists, cachedAt } = await fieldLists(runtime, open, refresh);
  const base = {
    smbFields: SMB_FIELDS.map((f) => ({ ...f })),
    cachedAt: cachedAt.toISOString(),
    mapping: fullMapping(open.provider, open.connection.fieldMapping),
  };
  if (open.provider === "crm_contacts") {
    return { ...base, contactFields: lists.contact ?? [], companyFields: lists.company ?? [] };
  }
  if (open.provider === "crm_leads") {
    return {
      ...base,
      leadFields: lists.lead ?? [],
      contactFields: lists.contact ?? [],
      accountFields: lists.account ?? [],
    };
  }
  return { ...base, personFields: lists.person ?? [], organizationFields: lists.organization ?? [] };
}

/**
 * `PATCH .../field-mapping`: replaces the saved mapping. Scopes of another CRM, or no scope of this
 * one, are 400 `validation_error`; entries naming a lead field or CRM field that does not exist
 * are dropped (so are repeats of the same pair).
 */
export async function updateFieldMapping(
  runtime: CrmRuntime,
  accountId: number,
  id: number,
  mapping: CrmFieldMapping,
): Promise<CrmFieldMapping> {
  const open = await crmIntegrationOf(runtime, accountId, id);
  const own = SCOPES[open.provider];
  const details: ErrorDetail[] = [];
  const sent = Object.entries(mapping).filter(([, list]) => list !== undefined);
  for (const [scope] of sent) {
    if (!own.includes(scope as (typeof own)[number])) {
      details.push({
        path: ["body", "mapping", scope],
        message: `scope ${scope} is not a scope of ${open.provider}`,
      });
    }
  }
  if (details.length === 0 && !sent.some(([scope]) => own.includes(scope as (typeof own)[number]))) {
    details.push({
      path: ["body", "mapping"],
      message: `send at least one scope of ${open.provider}: ${own.join(", ")}`,
    });
  }
  if (details.length > 0) throw errors.validation("The field mapping is not valid.", details);
  const { lists } = await fieldLists(runtime, open, false);
  const saved: Record<string, CrmFieldMappingEntry[]> = {};
  for (const scope of own) {
    const names = new Set((lists[scope] ?? []).map((f) => f.name));
    const seen = new Set<string>();
    saved[scope] = (mapping[scope] ?? [])
      .filter((e) => isSmbField(e.smbFieldId) && names.has(e.targetField))
      .filter((e) => {
        const key = `${e.smbFieldId}\u0000${e.targetField}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      })
      .map((e) => ({ smbFieldId: e.smbFieldId, targetField: e.targetField }));
  }
  await saveFieldMapping(runtime.db, id, saved);
  return fullMapping(open.provider, saved);
}

/** `DELETE .../field-mapping`: every scope empty (the default fields only). */
export async function resetFieldMapping(
  runtime: CrmRuntime,
  accountId: number,
  id: number,
): Promise<CrmFieldMapping> {
  const open = await crmIntegrationOf(runtime, accountId, id);
  await saveFieldMapping(runtime.db, id, {});
  return fullMapping(open.provider, {});
}

/** `POST .../field-mapping/test`: the dry run of the saved mapping. */
export async function testFieldMapping(
  runtime: CrmRuntime,
  accountId: number,
  id: number,
): Promise<Schemas["CrmMappingTestResult"]> {
  const open = await crmIntegrationOf(runtime, accountId, id);
  const { lists } = await fieldLists(runtime, open, false);
  const scopes = await crmCall(runtime, open, (session) =>
    open.adapter.dryRun(session, fullMapping(open.provider, open.connection.fieldMapping), lists),
  );
  return { ok: scopes.every((s) => s.ok), scopes };
}
