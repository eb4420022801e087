import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";
import type { KeyCache } from "./key-cache.js";
import { createNamedKey, listKeys, revokeKeyById } from "./key-management.js";
import { toApiKeyBody } from "./key-presenter.js";

/** `GET/POST /api-keys` and `POST /api-keys/{id}/revoke`: with an API key or the dashboard's session. */
export function apiKeyHandlers({
  db,
  keyCache,
}: {
  db: Db;
  keyCache?: KeyCache;
}): Handlers<"listApiKeys" | "createApiKey" | "revokeApiKey"> {
  return {
    async listApiKeys({ caller }) {
      const keys = await listKeys(db, caller.accountId);
      return { status: 200, body: { data: keys.map(toApiKeyBody) } };
    },
    async createApiKey({ caller, body }) {
      const { key, apiKey } = await createNamedKey(db, caller.accountId, body.name);
      return { status: 201, body: { data: { ...toApiKeyBody(key), key: apiKey } } };
    },
    async revokeApiKey({ caller, params }) {
      const key = await revokeKeyById(db, caller.accountId, params.id, keyCache);
      return { status: 200, body: { data: toApiKeyBody(key) } };
    },
  };
}
