import type { DbOrTrx } from "../../db/database.js";

/** The account a sign-in link goes to, found by e-mail address (case-insensitive), or undefined. */
export async function findAccountByEmail(
  db: DbOrTrx,
  email: string,
): Promise<{ id: number; email: string } | undefined> {
  return db
    .selectFrom("accounts")
    .select(["id", "email"])
    .where((eb) => eb(eb.fn("lower", ["email"]), "=", email.toLowerCase()))
    .executeTakeFirst();
}

export async function insertSignInLink(
  db: DbOrTrx,
  link: { accountId: number; tokenHash: string; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto("dashboard_sign_in_links")
    .values({ account_id: link.accountId, token_hash: link.tokenHash, expires_at: link.expiresAt })
    .execute();
}

/**
 * Uses a sign-in link: the one statement that marks it used, so of two requests with the same
 * link only one gets its account. Undefined for an unknown, used or expired link.
 */
export async function consumeSignInLink(db: DbOrTrx, tokenHash: string): Promise<number | undefined> {
  const row = await db
    .updateTable("dashboard_sign_in_links")
    .set((eb) => ({ used_at: eb.fn<Date>("now", []) }))
    .where("token_hash", "=", tokenHash)
    .where("used_at", "is", null)
    .where((eb) => eb("expires_at", ">", eb.fn<Date>("now", [])))
    .returning("account_id")
    .executeTakeFirst();
  return row?.account_id;
}

export async function insertSession(
  db: DbOrTrx,
  session: { accountId: number; tokenHash: string; expiresAt: Date },
): Promise<string> {
  const row = await db
    .insertInto("dashboard_sessions")
    .values({ account_id: session.accountId, token_hash: session.tokenHash, expires_at: session.expiresAt })
    .returning("id")
    .executeTakeFirstOrThrow();
  return String(row.id);
}

/** A live session (not revoked, not expired) with what authentication needs of its account. */
export interface SessionRecord {
  sessionId: string;
  accountId: number;
  email: string;
  expiresAt: Date;
  plan: string | null;
  subscriptionStatus: string;
}

export async function findLiveSession(db: DbOrTrx, tokenHash: string): Promise<SessionRecord | undefined> {
  const row = await db
    .selectFrom("dashboard_sessions")
    .innerJoin("accounts", "accounts.id", "dashboard_sessions.account_id")
    .select([
      "dashboard_sessions.id as sessionId",
      "accounts.id as accountId",
      "accounts.email as email",
      "dashboard_sessions.expires_at as expiresAt",
      "accounts.plan as plan",
      "accounts.subscription_status as subscriptionStatus",
    ])
    .where("dashboard_sessions.token_hash", "=", tokenHash)
    .where("dashboard_sessions.revoked_at", "is", null)
    .where((eb) => eb("dashboard_sessions.expires_at", ">", eb.fn<Date>("now", [])))
    .executeTakeFirst();
  return row ? { ...row, sessionId: String(row.sessionId) } : undefined;
}

/** Revokes a session (sign-out); later requests with its cookie are refused. */
export async function revokeSession(db: DbOrTrx, sessionId: string): Promise<void> {
  await db
    .updateTable("dashboard_sessions")
    .set((eb) => ({ revoked_at: eb.fn.coalesce("revoked_at", eb.fn<Date>("now", [])) }))
    .where("id", "=", sessionId)
    .execute();
}
