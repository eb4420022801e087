import type { components } from "../../../generated/api.js";
import { crmCall, crmIntegrationOf, fieldLists } from "./field-mapping.js";
import { listPipelines } from "./deals-adapter.js";
import { SMB_FIELDS } from "./lead.js";
import { fullMapping } from "./mapping.js";
import type { CrmRuntime } from "./runtime.js";

type Schemas = components["schemas"];

/** `GET .../deals-crm/pipelines`: the account's pipelines with their stages (read live, not cached). */
export async function dealsPipelines(
  runtime: CrmRuntime,
  accountId: number,
  id: number,
): Promise<Schemas["DealsPipeline"][]> {
  const open = await crmIntegrationOf(runtime, accountId, id, "crm_deals");
  return crmCall(runtime, open, (session) => listPipelines(session));
}

/** `GET .../deals-crm/deal-fields`: the Deal fields (cached with the other field lists) and the saved `deal` scope. */
export async function dealsDealFields(
  runtime: CrmRuntime,
  accountId: number,
  id: number,
  refresh: boolean,
): Promise<Schemas["DealsCrmDealFields"]> {
  const open = await crmIntegrationOf(runtime, accountId, id, "crm_deals");
  const { lists, cachedAt } = await fieldLists(runtime, open, refresh);
  return {
    smbFields: SMB_FIELDS.map((f) => ({ ...f })),
    dealFields: lists.deal ?? [],
    cachedAt: cachedAt.toISOString(),
    fieldMap: fullMapping("crm_deals", open.connection.fieldMapping).deal ?? [],
  };
}
