import { api, rememberCsrfToken } from "./api.js";

/** The signed-in session, or undefined after sending the browser to the sign-in page. */
export async function requireSession(): Promise<{ email: string } | undefined> {
  const { data } = await api.GET("/api/v1/auth/session");
  if (!data) {
    window.location.assign("/sign-in");
    return undefined;
  }
  rememberCsrfToken(data.data.csrfToken);
  return { email: data.data.email };
}
