import { createAccountWithKey, type NewAccount } from "../../src/accounts/service.js";
import { createApiKey } from "../../src/auth/service.js";
import type { Db } from "../../src/db/database.js";

let sequence = 0;

/** An account with a key; any field can be overridden. */
export async function buildAccount(
  db: Db,
  overrides: Partial<NewAccount> = {},
): Promise<{ accountId: number; apiKey: string; auth: { Authorization: string } }> {
  sequence += 1;
  const created = await createAccountWithKey(db, {
    email: `user${sequence}-${Date.now()}@example.com`,
    plan: "growth",
    ...overrides,
  });
  return { ...created, auth: { Authorization: `Bearer ${created.apiKey}` } };
}

/** Another key of an existing account. */
export async function buildKey(db: Db, accountId: number, name = "Second key") {
  const key = await createApiKey(db, accountId, name);
  return { ...key, auth: { Authorization: `Bearer ${key.apiKey}` } };
}
