/** The session cookie's name (the contract's `SessionCookieAuth`). */
export const SESSION_COOKIE = "svc_session";

/** How long a session lasts. */
export const SESSION_LIFETIME_MS = 7 * 24 * 3600 * 1000;

/** The value of one cookie of a `Cookie` header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return value === "" ? undefined : value;
  }
  return undefined;
}

/** Attributes of the session cookie: HttpOnly, SameSite=Lax, Secure when served over https. */
function attributes(publicBaseUrl: string, maxAgeSeconds: number): string {
  const secure = publicBaseUrl.startsWith("https:") ? "; Secure" : "";
  return `Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

/** The `Set-Cookie` value that starts a session. */
export function sessionCookie(token: string, publicBaseUrl: string): string {
  return `${SESSION_COOKIE}=${token}; ${attributes(publicBaseUrl, Math.floor(SESSION_LIFETIME_MS / 1000))}`;
}

/** The `Set-Cookie` value that clears the session cookie. */
export function clearedSessionCookie(publicBaseUrl: string): string {
  return `${SESSION_COOKIE}=; ${attributes(publicBaseUrl, 0)}`;
}
