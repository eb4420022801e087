import type { components } from "../../../generated/api.js";
import { api, messageOf } from "./api.js";
import { el } from "./dom.js";
import { actionButton, emptyRow, fillTable, when } from "./format.js";

type Delivery = components["schemas"]["IntegrationDelivery"];
type SendResult = components["schemas"]["DeliveryRetryResult"];

/** A sentence for the answer of a test or a retry (HTTP 200 even when the destination failed). */
export function describeSend(result: SendResult): string {
  if (result.status === "queued")
    return `Queued again: ${result.queuedBatches} batch(es), ${result.queuedLeads} lead(s).`;
  const code = result.statusCode === null ? "no answer" : `HTTP ${result.statusCode}`;
  if (result.status === "success") return `Delivered (${code}, ${result.latencyMs} ms).`;
  return `The destination failed (${code}): ${result.error ?? "no details"}.`;
}

/**
 * The delivery log of one integration (the 50 newest), with a retry of each delivery. `say`
 * shows an answer or an error as readable text; `changed` runs after a retry (the integration's
 * last success and failures change with it).
 */
export function deliveryLog(
  integration: { id: number; displayName: string },
  say: (text: string, kind?: "error" | "info") => void,
  changed: () => Promise<void>,
): { node: HTMLElement; refresh: () => Promise<void> } {
  const table = el("table", { id: "deliveries", "aria-label": `Deliveries of ${integration.displayName}` });
  const refreshButton = actionButton("Refresh the log", { id: "refresh-deliveries" }, () => refresh());
  const node = el(
    "section",
    { id: "delivery-log", class: "panel", "aria-labelledby": "delivery-log-title" },
    el("h2", { id: "delivery-log-title" }, `Delivery log: ${integration.displayName}`),
    refreshButton,
    table,
  );

  async function refresh(): Promise<void> {
    const { data, error, response } = await api.GET("/api/v1/integrations/{id}/deliveries", {
      params: { path: { id: integration.id } },
    });
    if (!data) return say(messageOf(error, response), "error");
    const headings = ["Created", "Event", "Status", "HTTP", "Attempts", "Latency", "Error", "Actions"];
    fillTable(
      table,
      headings,
      data.data.length === 0 ? [emptyRow(headings.length, "Nothing delivered yet.")] : data.data.map(row),
    );
  }

  function row(delivery: Delivery): HTMLElement {
    const retry = actionButton(
      "Retry",
      { "data-retry": String(delivery.id), "aria-label": `Retry delivery ${delivery.id}` },
      async () => {
        const { data, error, response } = await api.POST(
          "/api/v1/integrations/{id}/deliveries/{deliveryId}/retry",
          { params: { path: { id: integration.id, deliveryId: delivery.id } } },
        );
        if (!data) return say(messageOf(error, response), "error");
        say(`Retry of delivery ${delivery.id}: ${describeSend(data.data)}`);
        await Promise.all([refresh(), changed()]);
      },
    );
    return el(
      "tr",
      { "data-delivery-id": String(delivery.id) },
      el("td", {}, when(delivery.createdAt)),
      el("td", {}, delivery.eventType),
      el("td", { class: "state" }, delivery.status),
      el("td", {}, delivery.statusCode === null ? "—" : String(delivery.statusCode)),
      el("td", {}, String(delivery.attemptCount)),
      el("td", {}, delivery.latencyMs === null ? "—" : `${delivery.latencyMs} ms`),
      el("td", {}, delivery.errorMessage ?? ""),
      el("td", {}, retry),
    );
  }

  return { node, refresh };
}
