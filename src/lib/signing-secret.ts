import { randomBytes } from "node:crypto";
import type { Db } from "../db/database.js";

/**
 * The secret that signs download links and OAuth state: `SIGNING_SECRET` when set, otherwise one
 * generated once and kept in `app_settings`, so that every process of the deployment shares it.
 */
export async function loadSigningSecret(db: Db, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  await db
    .insertInto("app_settings")
    .values({ key: "signing_secret", value: randomBytes(32).toString("hex") })
    .onConflict((oc) => oc.column("key").doNothing())
    .execute();
  const row = await db
    .selectFrom("app_settings")
    .select("value")
    .where("key", "=", "signing_secret")
    .executeTakeFirstOrThrow();
  return row.value;
}
