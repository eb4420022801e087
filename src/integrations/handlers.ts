import type { CrmConfig } from "../config.js";
import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";
import type { Outbound } from "../outbound/index.js";
import { toIntegrationBody, toProviderBody } from "./presenter.js";
import { deleteIntegrationRevokingCrm } from "./crm/revoke.js";
import {
  createWebhookIntegration,
  getIntegration,
  listIntegrations,
  listProviders,
  updateIntegration,
} from "./service.js";

type IntegrationOperation =
  | "listIntegrationProviders"
  | "listIntegrations"
  | "getIntegration"
  | "createWebhookIntegration"
  | "updateIntegration"
  | "deleteIntegration";

/** The provider catalog and the CRUD of webhook integrations (`/integrations`). */
export function integrationHandlers(deps: {
  db: Db;
  outbound: Outbound;
  config?: { crm: CrmConfig };
}): Handlers<IntegrationOperation> {
  const { db } = deps;
  return {
    async listIntegrationProviders() {
      return { status: 200, body: { data: listProviders(deps.config?.crm).map(toProviderBody) } };
    },
    async listIntegrations({ caller }) {
      const integrations = await listIntegrations(db, caller.accountId);
      return { status: 200, body: { data: integrations.map(toIntegrationBody) } };
    },
    async getIntegration({ caller, params }) {
      const integration = await getIntegration(db, caller.accountId, params.id);
      return { status: 200, body: { data: toIntegrationBody(integration) } };
    },
    async createWebhookIntegration({ caller, body }) {
      const { integration, signingSecret } = await createWebhookIntegration(deps, caller, body);
      return { status: 201, body: { data: { integration: toIntegrationBody(integration), signingSecret } } };
    },
    async updateIntegration({ caller, params, body }) {
      const integration = await updateIntegration(deps, caller, params.id, body);
      return { status: 200, body: { data: toIntegrationBody(integration) } };
    },
    async deleteIntegration({ caller, params }) {
      await deleteIntegrationRevokingCrm(db, caller.accountId, params.id);
      return { status: 200, body: { data: { message: "Integration deleted." } } };
    },
  };
}
