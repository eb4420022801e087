import { api, messageOf, rememberCsrfToken } from "./api.js";
import { el, messageBox, show } from "./dom.js";

/** The sign-in page: ask for a link by e-mail, or use the link's token (`#token=`). */
export async function signInPage(): Promise<void> {
  if (await useLinkInAddress()) return;
  // A link opened in this tab while the page is shown only changes the fragment.
  window.addEventListener("hashchange", () => void useLinkInAddress());
  const box = messageBox();
  const email = el("input", {
    id: "email",
    name: "email",
    type: "email",
    required: true,
    autocomplete: "email",
  });
  const form = el(
    "form",
    { id: "sign-in-form" },
    el("label", { for: "email" }, "E-mail address"),
    email,
    el("button", { type: "submit" }, "E-mail me a sign-in link"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void (async () => {
      const { data, error, response } = await api.POST("/api/v1/auth/sign-in-links", {
        body: { email: email.value },
      });
      box.say(data ? data.data.message : messageOf(error, response), data ? "info" : "error");
    })();
  });
  show(
    el("h1", {}, "Sign in"),
    el("p", {}, "We e-mail you a link that signs you in once, for 15 minutes."),
    form,
    box.node,
  );
}

/** Signs in with the token of the address's fragment, if any; whether there was one. */
async function useLinkInAddress(): Promise<boolean> {
  const token = new URLSearchParams(window.location.hash.slice(1)).get("token");
  if (!token) return false;
  // The token leaves the address bar (and the history) before anything else happens.
  window.history.replaceState(null, "", "/sign-in");
  await useLink(token);
  return true;
}

async function useLink(token: string): Promise<void> {
  const box = messageBox();
  show(el("h1", {}, "Signing in…"), box.node);
  const { data, error, response } = await api.POST("/api/v1/auth/sessions", { body: { token } });
  if (!data) {
    box.say(messageOf(error, response), "error");
    document.getElementById("main")?.append(el("p", {}, el("a", { href: "/sign-in" }, "Ask for a new link")));
    return;
  }
  rememberCsrfToken(data.data.csrfToken);
  window.location.assign("/");
}
