import type { components } from "../../../generated/api.js";
import { api, messageOf } from "./api.js";
import { deliveryLog, describeSend } from "./deliveries.js";
import { el, messageBox, show } from "./dom.js";
import { actionButton, emptyRow, fillTable, when } from "./format.js";

type Integration = components["schemas"]["Integration"];
type Provider = components["schemas"]["IntegrationProvider"];
type ProviderId = components["schemas"]["IntegrationProviderId"];
type WebhookProviderId = components["schemas"]["WebhookProviderId"];
type EventType = components["schemas"]["WebhookEventType"];

/** The events a webhook can subscribe to (the contract's `WebhookEventType`). */
const EVENTS: readonly EventType[] = [
  "lead.created",
  "lead.updated",
  "export.completed",
  "export.leads",
  "email_schedule.sent",
  "credit.low_balance",
];

const isWebhookProvider = (id: ProviderId): id is WebhookProviderId => !id.startsWith("crm_");

/**
 * The integrations page: the account's integrations; a new webhook (its signing secret shown
 * once); pause, resume, test and delete; the delivery log with retry; connecting a configured CRM.
 * The heading, the form and the empty tables are drawn at once; the data fills them when it comes.
 */
export async function integrationsPage(): Promise<void> {
  const box = messageBox();
  const say = box.say;
  const secret = el("div", { id: "new-webhook", class: "secret", hidden: true });
  const table = el("table", { id: "integrations", "aria-label": "Integrations" });
  fillTable(table, ["Integration"], [emptyRow(1, "Loading integrations…")]);
  const crms = el("div", { id: "crms" }, el("p", {}, "Loading the CRMs…"));
  const logSlot = el("div", { id: "delivery-log-slot" });

  const provider = el("select", { id: "webhook-provider", name: "provider" }, el("option", {}, "Loading…"));
  const name = el("input", { id: "webhook-name", name: "displayName", required: true, maxlength: "100" });
  const url = el("input", {
    id: "webhook-url",
    name: "targetUrl",
    required: true,
    inputmode: "url",
    placeholder: "https://example.com/hooks/leads",
  });
  const events = EVENTS.map((event) =>
    el("input", {
      type: "checkbox",
      name: "events",
      value: event,
      id: `event-${event}`,
      checked: event === "lead.created",
    }),
  );
  const submit = el("button", { type: "submit", disabled: true }, "Create webhook");
  const form = el(
    "form",
    { id: "create-webhook", class: "stacked" },
    el("label", { for: "webhook-provider" }, "Receiver"),
    provider,
    el("label", { for: "webhook-name" }, "Name"),
    name,
    el("label", { for: "webhook-url" }, "Destination URL"),
    url,
    el(
      "fieldset",
      { class: "events" },
      el("legend", {}, "Events"),
      ...events.map((box) => el("label", { class: "check" }, box, box.value)),
    ),
    submit,
  );

  // Answers of the creation form are shown beside it, those of the list's buttons above the list.
  const formBox = messageBox();
  formBox.node.id = "create-webhook-message";
  show(
    el("h1", {}, "Integrations"),
    box.node,
    table,
    logSlot,
    el("h2", {}, "New webhook"),
    form,
    formBox.node,
    secret,
    el("h2", {}, "CRMs"),
    crms,
  );

  async function refresh(): Promise<void> {
    const { data, error, response } = await api.GET("/api/v1/integrations");
    if (!data) return say(messageOf(error, response), "error");
    const headings = ["Name", "Receiver", "Destination", "Status", "Last success", "Failures", "Actions"];
    fillTable(
      table,
      headings,
      data.data.length === 0 ? [emptyRow(headings.length, "No integration yet.")] : data.data.map(row),
    );
  }

  function row(integration: Integration): HTMLElement {
    const label = integration.displayName;
    const paused = integration.status === "disabled";
    const toggle = actionButton(
      paused ? "Resume" : "Pause",
      { "data-toggle": String(integration.id), "aria-label": `${paused ? "Resume" : "Pause"} ${label}` },
      async () => {
        const { data, error, response } = await api.PATCH("/api/v1/integrations/{id}", {
          params: { path: { id: integration.id } },
          body: { status: paused ? "connected" : "disabled" },
        });
        if (!data) return say(messageOf(error, response), "error");
        say(`"${data.data.displayName}" is ${data.data.status === "disabled" ? "paused" : "resumed"}.`);
        await refresh();
      },
    );
    const test = actionButton(
      "Test",
      { "data-test": String(integration.id), "aria-label": `Send a test event to ${label}` },
      async () => {
        const { data, error, response } = await api.POST("/api/v1/integrations/{id}/test", {
          params: { path: { id: integration.id } },
          body: {},
        });
        if (!data) return say(messageOf(error, response), "error");
        say(`Test of "${label}": ${describeSend(data.data)}`);
        await Promise.all([openLog(integration), refresh()]);
      },
    );
    const log = actionButton(
      "Deliveries",
      { "data-log": String(integration.id), "aria-label": `Show the deliveries of ${label}` },
      () => openLog(integration),
    );
    const remove = actionButton(
      "Delete",
      { "data-delete": String(integration.id), "aria-label": `Delete ${label}` },
      async () => {
        if (!window.confirm(`Delete "${label}" with its delivery history?`)) return;
        const { data, error, response } = await api.DELETE("/api/v1/integrations/{id}", {
          params: { path: { id: integration.id } },
        });
        if (!data) return say(messageOf(error, response), "error");
        say(`"${label}" deleted.`);
        logSlot.replaceChildren();
        await refresh();
      },
    );
    return el(
      "tr",
      { "data-integration-id": String(integration.id) },
      el("td", { class: "wrap" }, label),
      el("td", {}, integration.providerName),
      el("td", { class: "wrap" }, integration.targetUrl ?? integration.externalAccountId ?? "—"),
      el("td", { class: "state" }, integration.status === "disabled" ? "paused" : integration.status),
      el("td", {}, when(integration.lastSuccessAt)),
      el("td", {}, String(integration.consecutiveFailures)),
      el("td", {}, el("div", { class: "actions" }, toggle, test, log, remove)),
    );
  }

  async function openLog(integration: Integration): Promise<void> {
    const log = deliveryLog(integration, say, refresh);
    logSlot.replaceChildren(log.node);
    await log.refresh();
  }

  function drawCatalog(providers: Provider[]): void {
    const webhooks = providers.filter((p) => isWebhookProvider(p.id) && p.available);
    provider.replaceChildren(
      ...webhooks.map((p) =>
        el("option", { value: p.id, selected: p.id === "generic_webhook" }, `${p.name}: ${p.tagline}`),
      ),
    );
    submit.disabled = false;
    const crmList = providers.filter((p) => !isWebhookProvider(p.id));
    crms.replaceChildren(
      el(
        "ul",
        { class: "crm-list" },
        ...crmList.map((p) =>
          el(
            "li",
            { "data-crm": p.id },
            el("strong", {}, p.name),
            ` ${p.tagline} `,
            p.available
              ? actionButton("Connect", { "aria-label": `Connect ${p.name}` }, () => connect(p))
              : el("span", { class: "muted" }, p.reason ?? "Not available."),
          ),
        ),
      ),
    );
  }

  async function connect(p: Provider): Promise<void> {
    const { data, error, response } = await api.POST("/api/v1/integrations/{provider}/connect", {
      params: { path: { provider: p.id } },
      body: {},
    });
    if (!data) return say(messageOf(error, response), "error");
    say(`Opening ${p.name} to authorize the connection…`);
    window.location.assign(data.data.authorizationUrl);
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = provider.value;
    if (!isWebhookProvider(chosen as ProviderId)) return;
    submit.disabled = true;
    void (async () => {
      const { data, error, response } = await api.POST("/api/v1/integrations/webhook", {
        body: {
          provider: chosen as WebhookProviderId,
          displayName: name.value,
          targetUrl: url.value,
          events: events.filter((e) => e.checked).map((e) => e.value as EventType),
        },
      });
      submit.disabled = false;
      if (!data) return formBox.say(messageOf(error, response), "error");
      secret.hidden = false;
      secret.replaceChildren(
        el(
          "p",
          {},
          "The webhook's signing secret. Copy it now: it is not shown again. Each delivery is signed with it (header X-SVC-Signature).",
        ),
        el("code", { id: "new-webhook-secret" }, data.data.signingSecret),
      );
      name.value = "";
      url.value = "";
      formBox.say(`Webhook "${data.data.integration.displayName}" created.`);
      await refresh();
    })();
  });

  const catalog = api.GET("/api/v1/integrations/providers").then(({ data, error, response }) => {
    if (!data) return say(messageOf(error, response), "error");
    drawCatalog(data.data);
  });
  await Promise.all([refresh(), catalog]);
}
