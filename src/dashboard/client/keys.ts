import type { components } from "../../../generated/api.js";
import { api, messageOf } from "./api.js";
import { el, messageBox, show } from "./dom.js";

type ApiKey = components["schemas"]["ApiKey"];

function when(value: string | null): string {
  return value === null ? "never" : new Date(value).toLocaleString();
}

/** The API keys page: list, create (the secret shown once), revoke. */
export async function keysPage(): Promise<void> {
  const box = messageBox();
  const secret = el("div", { id: "new-key", class: "secret", hidden: true });
  const table = el("table", { id: "keys" });
  const name = el("input", { id: "key-name", name: "name", required: true, maxlength: "100" });
  const form = el(
    "form",
    { id: "create-key" },
    el("label", { for: "key-name" }, "Name of the new key"),
    name,
    el("button", { type: "submit" }, "Create key"),
  );

  async function refresh(): Promise<void> {
    const { data, error, response } = await api.GET("/api/v1/api-keys");
    if (!data) return box.say(messageOf(error, response), "error");
    table.replaceChildren(
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          ...["Name", "Prefix", "Created", "Last used", "State", ""].map((h) =>
            el("th", { scope: "col" }, h),
          ),
        ),
      ),
      el("tbody", {}, ...data.data.map(keyRow)),
    );
  }

  function keyRow(key: ApiKey): HTMLElement {
    const revoke = el(
      "button",
      { type: "button", "data-revoke": String(key.id), "aria-label": `Revoke the key ${key.name}` },
      "Revoke",
    );
    revoke.addEventListener("click", () => {
      void (async () => {
        const { data, error, response } = await api.POST("/api/v1/api-keys/{id}/revoke", {
          params: { path: { id: key.id } },
        });
        box.say(
          data ? `Key "${data.data.name}" revoked.` : messageOf(error, response),
          data ? "info" : "error",
        );
        await refresh();
      })();
    });
    return el(
      "tr",
      { "data-key-id": String(key.id) },
      el("td", {}, key.name),
      el("td", {}, el("code", {}, `${key.keyPrefix}…`)),
      el("td", {}, when(key.createdAt)),
      el("td", {}, when(key.lastUsedAt)),
      el("td", { class: "state" }, key.revoked ? `revoked ${when(key.revokedAt)}` : "active"),
      el("td", {}, key.revoked ? null : revoke),
    );
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void (async () => {
      const { data, error, response } = await api.POST("/api/v1/api-keys", { body: { name: name.value } });
      if (!data) return box.say(messageOf(error, response), "error");
      secret.hidden = false;
      secret.replaceChildren(
        el("p", {}, "Your new key. Copy it now: it is not shown again."),
        el("code", { id: "new-key-secret" }, data.data.key),
      );
      name.value = "";
      box.say(`Key "${data.data.name}" created.`);
      await refresh();
    })();
  });

  show(el("h1", {}, "API keys"), form, secret, box.node, table);
  await refresh();
}
