import type { Handlers } from "../../http/contract.js";
import { dealsDealFields, dealsPipelines } from "./deals-crm.js";
import { getFieldMapping, resetFieldMapping, testFieldMapping, updateFieldMapping } from "./field-mapping.js";
import { finishConnect, startConnect } from "./oauth.js";
import { pageFile } from "./pages.js";
import { crmRuntime, type CrmDeps } from "./runtime.js";

type CrmOperation =
  | "connectIntegration"
  | "integrationOAuthCallback"
  | "getIntegrationFieldMapping"
  | "updateIntegrationFieldMapping"
  | "resetIntegrationFieldMapping"
  | "testIntegrationFieldMapping"
  | "listDealsCrmPipelines"
  | "getDealsCrmDealFields";

/** CRM connection (connect, OAuth callback) and field mapping. */
export function crmHandlers(deps: CrmDeps): Handlers<CrmOperation> {
  const runtime = () => crmRuntime(deps);
  return {
    async connectIntegration({ caller, params, body }) {
      const link = await startConnect(runtime(), caller, params.provider, body?.environment);
      return {
        status: 200,
        body: {
          data: {
            provider: link.provider,
            authorizationUrl: link.authorizationUrl,
            expiresAt: link.expiresAt.toISOString(),
          },
        },
      };
    },
    async integrationOAuthCallback({ query }) {
      const page = await finishConnect(runtime(), query);
      const file = pageFile(page);
      return page.status === 200 ? { status: 200, file } : { status: 400, file };
    },
    async getIntegrationFieldMapping({ caller, params, query }) {
      const data = await getFieldMapping(runtime(), caller.accountId, params.id, query.refresh === true);
      return { status: 200, body: { data } };
    },
    async updateIntegrationFieldMapping({ caller, params, body }) {
      const mapping = await updateFieldMapping(runtime(), caller.accountId, params.id, body.mapping);
      return { status: 200, body: { data: { mapping } } };
    },
    async resetIntegrationFieldMapping({ caller, params }) {
      const mapping = await resetFieldMapping(runtime(), caller.accountId, params.id);
      return { status: 200, body: { data: { mapping } } };
    },
    async testIntegrationFieldMapping({ caller, params }) {
      const data = await testFieldMapping(runtime(), caller.accountId, params.id);
      return { status: 200, body: { data } };
    },
    async listDealsCrmPipelines({ caller, params }) {
      const data = await dealsPipelines(runtime(), caller.accountId, params.id);
      return { status: 200, body: { data } };
    },
    async getDealsCrmDealFields({ caller, params, query }) {
      const data = await dealsDealFields(runtime(), caller.accountId, params.id, query.refresh === true);
      return { status: 200, body: { data } };
    },
  };
}
