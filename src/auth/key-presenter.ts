import type { JsonBody } from "../http/contract.js";
import type { ListedKey } from "./key-list-repository.js";

export type ApiKeyBody = JsonBody<"revokeApiKey", 200>["data"];

/** The API's shape of a key: never its secret. */
export function toApiKeyBody(key: ListedKey): ApiKeyBody {
  return {
    id: key.id,
    name: key.name,
    keyPrefix: key.keyPrefix,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revoked: key.revokedAt !== null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}
