import { createHash } from "node:crypto";
import type { Handlers } from "../../http/contract.js";
import { errors } from "../../http/errors.js";
import type { RateLimits } from "../../rate-limit/limiter.js";
import type { LimitRule } from "../../rate-limit/policy.js";
import { clearedSessionCookie, readCookie, SESSION_COOKIE, sessionCookie } from "./cookie.js";
import {
  requestSignInLink,
  sessionOf,
  signIn,
  signOut,
  type SessionDeps,
  type SessionView,
} from "./service.js";

/** Sign-in links per address: counted for every address, with an account or not (same answers). */
export const SIGN_IN_LINKS_PER_ADDRESS: LimitRule = {
  name: "sign_in_address",
  points: 5,
  durationSeconds: 3600,
  per: "ip",
  label: "5 sign-in links per hour per address",
};

function sessionBody(view: SessionView) {
  return { ...view, expiresAt: view.expiresAt.toISOString() };
}

/** `POST /auth/sign-in-links`, `POST /auth/sessions`, `GET/DELETE /auth/session`. */
export function dashboardSessionHandlers(
  deps: SessionDeps & { rateLimits: RateLimits },
): Handlers<"requestSignInLink" | "signIn" | "getSession" | "signOut"> {
  return {
    async requestSignInLink({ body }) {
      const address = body.email.trim().toLowerCase();
      const subject = `e${createHash("sha256").update(address).digest("hex").slice(0, 32)}`;
      await deps.rateLimits.consume([{ rule: SIGN_IN_LINKS_PER_ADDRESS, subject }]);
      await requestSignInLink(deps, address);
      return {
        status: 202,
        body: {
          data: {
            message: "If the address has an account, a sign-in link valid for 15 minutes is on its way.",
          },
        },
      };
    },
    async signIn({ body }) {
      const started = await signIn(deps, body.token);
      return {
        status: 201,
        headers: { "Set-Cookie": sessionCookie(started.token, deps.publicBaseUrl) },
        body: { data: sessionBody(started.session) },
      };
    },
    async getSession({ http }) {
      const token = readCookie(http.rawHeaders.cookie, SESSION_COOKIE);
      if (token === undefined) throw errors.unauthorized();
      return { status: 200, body: { data: sessionBody(await sessionOf(deps, token)) } };
    },
    async signOut({ caller }) {
      if (caller.channel !== "dashboard") throw errors.unauthorized();
      await signOut(deps, caller.sessionId);
      return {
        status: 200,
        headers: { "Set-Cookie": clearedSessionCookie(deps.publicBaseUrl) },
        body: { data: { message: "Signed out." } },
      };
    },
  };
}
