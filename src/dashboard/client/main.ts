import { api, messageOf } from "./api.js";
import { el } from "./dom.js";
import { billingPage } from "./billing.js";
import { integrationsPage } from "./integrations.js";
import { schedulesPage } from "./schedules.js";
import { keysPage } from "./keys.js";
import { overviewPage } from "./overview.js";
import { requireSession } from "./session.js";
import { searchPage } from "./search.js";
import { exportsPage } from "./exports.js";
import { enrichmentsPage } from "./enrichments.js";
import { signInPage } from "./sign-in.js";

/** Draws the page of the current path (the server serves the same shell at each). */
async function start(): Promise<void> {
  const path = window.location.pathname;
  if (path === "/sign-in") return signInPage();
  const session = await requireSession();
  if (!session) return;
  drawNav(session.email);
  if (path === "/keys") return keysPage();
  if (path === "/search") return searchPage();
  if (path === "/exports") return exportsPage();
  if (path === "/enrichments") return enrichmentsPage();
  if (path === "/integrations") return integrationsPage();
  if (path === "/schedules") return schedulesPage();
  if (path === "/billing") return billingPage();
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
    el("a", { href: "/search" }, "Lead search"),
    el("a", { href: "/exports" }, "Exports"),
    el("a", { href: "/enrichments" }, "Enrichments"),
    el("a", { href: "/integrations" }, "Integrations"),
    el("a", { href: "/schedules" }, "E-mail schedules"),
    el("a", { href: "/billing" }, "Billing"),
    el("span", { class: "who" }, email),
    signOut,
  );
}

void start();
