import type { Db } from "../../db/database.js";
import type { DashboardCaller } from "../../http/contract.js";
import { ApiError, errors } from "../../http/errors.js";
import { enqueueMail } from "../../mail/queue.js";
import { SESSION_LIFETIME_MS } from "./cookie.js";
import { signInMail } from "./mail.js";
import {
  consumeSignInLink,
  findAccountByEmail,
  findLiveSession,
  insertSession,
  insertSignInLink,
  revokeSession,
  type SessionRecord,
} from "./repository.js";
import { csrfMatches, csrfTokenFor, hashToken, newToken } from "./tokens.js";

/** How long a sign-in link works. */
export const SIGN_IN_LINK_MS = 15 * 60 * 1000;

const PAID_STATUSES = new Set(["active", "trialing"]);

/** What the session operations need: the database, the public address and the signing secret. */
export interface SessionDeps {
  db: Db;
  publicBaseUrl: string;
  signingSecret: string;
}

/**
 * E-mails a one-time sign-in link to the address when it has an account (queued in the same
 * transaction as the link, sent by the worker); does nothing otherwise. The caller answers the
 * same either way.
 */
export async function requestSignInLink(deps: SessionDeps, email: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const account = await findAccountByEmail(trx, email.trim());
    if (!account) return;
    const token = newToken();
    await insertSignInLink(trx, {
      accountId: account.id,
      tokenHash: hashToken(token),
      expiresAt: new Date(Date.now() + SIGN_IN_LINK_MS),
    });
    const link = `${deps.publicBaseUrl}/sign-in#token=${token}`;
    await enqueueMail(trx, signInMail(account.email, link));
  });
}

/** A started session: its cookie token (in clear, once) and what the API shows of it. */
export interface StartedSession {
  token: string;
  session: SessionView;
}

/** The session as `DashboardSession` shows it. */
export interface SessionView {
  accountId: number;
  email: string;
  expiresAt: Date;
  csrfToken: string;
}

function signInLinkInvalid(): ApiError {
  return new ApiError(
    401,
    "sign_in_link_invalid",
    "This sign-in link is not valid: it was already used or has expired. Ask for a new one.",
  );
}

/** Uses a sign-in link (once) and starts a session of its account. */
export async function signIn(deps: SessionDeps, linkToken: string): Promise<StartedSession> {
  return deps.db.transaction().execute(async (trx) => {
    const accountId = await consumeSignInLink(trx, hashToken(linkToken));
    if (accountId === undefined) throw signInLinkInvalid();
    const token = newToken();
    const tokenHash = hashToken(token);
    const expiresAt = new Date(Date.now() + SESSION_LIFETIME_MS);
    await insertSession(trx, { accountId, tokenHash, expiresAt });
    const session = await findLiveSession(trx, tokenHash);
    if (!session) throw new Error("the session just created is not found");
    return { token, session: viewOf(deps, session, tokenHash) };
  });
}

function viewOf(deps: SessionDeps, session: SessionRecord, tokenHash: string): SessionView {
  return {
    accountId: session.accountId,
    email: session.email,
    expiresAt: session.expiresAt,
    csrfToken: csrfTokenFor(deps.signingSecret, tokenHash),
  };
}

/** The session of a cookie's token, with its CSRF token; 401 for an unknown, revoked or expired one. */
export async function sessionOf(deps: SessionDeps, token: string): Promise<SessionView> {
  const tokenHash = hashToken(token);
  const session = await findLiveSession(deps.db, tokenHash);
  if (!session) throw sessionRefused();
  return viewOf(deps, session, tokenHash);
}

function sessionRefused(): ApiError {
  return errors.unauthorized("The dashboard session is not valid (signed out or expired): sign in again.");
}

/**
 * Authenticates a request made with the session cookie. 401 for a session that is unknown,
 * revoked or expired; 403 when a call that changes something (any method but GET and HEAD) lacks
 * the session's CSRF token in `X-CSRF-Token`; 403 for an account without an active or trialing
 * paid subscription, except on the session's own operations (`paidOnly` false).
 */
export async function authenticateSession(
  deps: SessionDeps,
  input: { token: string; method: string; csrfHeader: string | undefined; paidOnly: boolean },
): Promise<DashboardCaller> {
  const tokenHash = hashToken(input.token);
  const session = await findLiveSession(deps.db, tokenHash);
  if (!session) throw sessionRefused();
  const changes = input.method !== "GET" && input.method !== "HEAD";
  if (changes && !csrfMatches(deps.signingSecret, tokenHash, input.csrfHeader)) {
    throw errors.forbidden("The X-CSRF-Token header is missing or wrong: reload the dashboard.");
  }
  if (input.paidOnly && (!session.plan || !PAID_STATUSES.has(session.subscriptionStatus))) {
    throw errors.forbidden();
  }
  return {
    accountId: session.accountId,
    keyId: null,
    keyPrefix: null,
    keyName: null,
    channel: "dashboard",
    sessionId: session.sessionId,
  };
}

/** Ends a session at once (sign-out). */
export async function signOut(deps: SessionDeps, sessionId: string): Promise<void> {
  await revokeSession(deps.db, sessionId);
}
