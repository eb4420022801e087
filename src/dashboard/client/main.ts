import { api, messageOf } from "./api.js";
import { el } from "./dom.js";
import { keysPage } from "./keys.js";
import { overviewPage } from "./overview.js";
import { requireSession } from "./session.js";
import { signInPage } from "./sign-in.js";

/** Draws the page of the current path (the server serves the same shell at each). */
async function start(): Promise<void> {
  const path = window.location.pathname;
  if (path === "/sign-in") return signInPage();
  const session = await requireSession();
  if (!session) return;
  drawNav(session.email);
  if (path === "/keys") return keysPage();
  return overviewPage(session.email);
}

function drawNav(email: string): void {
  const nav = document.getElementById("nav");
  if (!nav) return;
  const signOut = el("button", { type: "button", id: "sign-out" }, "Sign out");
  signOut.addEventListener("click", () => {
    void (async () => {
      const { error, response } = await api.DELETE("/api/v1/auth/session");
      if (error) {
        window.alert(messageOf(error, response));
        return;
      }
      window.location.assign("/sign-in");
    })();
  });
  nav.replaceChildren(
    el("a", { href: "/" }, "Overview"),
    el("a", { href: "/keys" }, "API keys"),
    el("span", { class: "who" }, email),
    signOut,
  );
}

void start();
