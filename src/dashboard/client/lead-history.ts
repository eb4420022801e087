import type { components } from "../../../generated/api.js";
import { api, messageOf } from "./api.js";
import { el, type messageBox } from "./dom.js";
import { fileNameOf, followJob, idempotencyKey, jobMessage, jsonOf, progressView } from "./progress.js";

type Entry = components["schemas"]["LeadExportHistoryEntry"];
type JobAccepted = components["schemas"]["JobAccepted"];
type RefreshResult = components["schemas"]["LeadRefreshResult"];
type Method = components["schemas"]["LeadExportMethod"];

const PAGE_SIZE = 50;
const METHODS: Method[] = ["dashboard", "api", "email_schedule", "crm_push", "enrichment"];

/** A member of a lead's stored data as text (third-party data: always shown as text). */
function member(lead: Record<string, unknown> | null, ...names: string[]): string {
  for (const name of names) {
    const value = lead?.[name];
    if (typeof value === "string" && value !== "") return value;
    if (typeof value === "number") return String(value);
  }
  return "—";
}

/**
 * The lead export history (one row per lead received): filters by channel and date, paging,
 * and for the selected leads a refresh (free; shows what changed) and a re-export as a file
 * (free), both long work followed with its progress.
 */
export function leadHistorySection(
  box: ReturnType<typeof messageBox>,
  reloadFiles: () => Promise<void>,
): { node: HTMLElement; load: () => Promise<void> } {
  let offset = 0;
  let total = 0;
  const selected = new Set<number>();
  const rows = el("tbody", {});
  const method = el("select", { id: "history-method" }, el("option", { value: "" }, "Any"));
  method.append(...METHODS.map((m) => el("option", { value: m }, m)));
  const from = el("input", { id: "history-from", type: "date" });
  const to = el("input", { id: "history-to", type: "date" });
  const filters = el(
    "form",
    { id: "history-filters", "aria-label": "Lead export history filters" },
    el("label", { for: "history-method" }, "Received through"),
    method,
    el("label", { for: "history-from" }, "From"),
    from,
    el("label", { for: "history-to" }, "To"),
    to,
    el("button", { type: "submit" }, "Show"),
  );
  const all = el("input", {
    type: "checkbox",
    id: "history-all",
    "aria-label": "Select every lead on this page",
  });
  const pageInfo = el("span", { id: "history-page", "aria-live": "polite" });
  const previous = el("button", { type: "button", id: "history-previous" }, "Previous");
  const next = el("button", { type: "button", id: "history-next" }, "Next");
  const format = el(
    "select",
    { id: "reexport-format" },
    el("option", { value: "" }, "Default columns (CSV)"),
  );
  const refresh = el("button", { type: "button", id: "refresh-selected" }, "Refresh selected");
  const reexport = el("button", { type: "button", id: "reexport-selected" }, "Re-export selected");
  const progress = progressView("history-progress", "Progress of the lead history work");
  const result = el("div", { id: "history-result" });

  const table = el(
    "div",
    { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "Lead export history" },
    el(
      "table",
      { id: "lead-history" },
      el("caption", {}, "Leads you received, newest export first"),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", { scope: "col" }, all),
          ...["Company", "Website", "City", "Received", "Through", "Changed at last refresh"].map((h) =>
            el("th", { scope: "col" }, h),
          ),
        ),
      ),
      rows,
    ),
  );

  const node = el(
    "section",
    { id: "lead-history-section", "aria-labelledby": "history-heading" },
    el("h2", { id: "history-heading" }, "Lead export history"),
    el("p", { class: "hint" }, "Refreshing and re-exporting leads you already received is free."),
    filters,
    el(
      "div",
      { class: "actions-row" },
      refresh,
      el("label", { for: "reexport-format" }, "Format"),
      format,
      reexport,
    ),
    progress.node,
    result,
    table,
    el("div", { class: "pager" }, previous, pageInfo, next),
  );

  function entryRow(entry: Entry): HTMLTableRowElement {
    const company = member(entry.lead, "wCompanyName", "companyName");
    const box = el("input", {
      type: "checkbox",
      class: "select-entry",
      value: String(entry.id),
      "aria-label": `Select ${company}`,
      checked: selected.has(entry.id),
    });
    box.addEventListener("change", () => {
      if (box.checked) selected.add(entry.id);
      else selected.delete(entry.id);
    });
    return el(
      "tr",
      { "data-tracking-id": String(entry.id) },
      el("td", {}, box),
      el("td", { class: "company" }, company),
      el("td", {}, member(entry.lead, "wWebsite", "website", "wOgrequestedUrl")),
      el("td", { class: "city" }, member(entry.lead, "wCity", "city", "wAddressCity")),
      el("td", {}, new Date(entry.exportedAt).toLocaleString()),
      el("td", { class: "method" }, entry.exportMethod),
      el("td", { class: "changed" }, entry.lastChangedFields?.join(", ") || "—"),
    );
  }

  async function load(): Promise<void> {
    const channel = METHODS.find((m) => m === method.value);
    const { data, error, response } = await api.GET("/api/v1/lead-export-history", {
      params: {
        query: {
          limit: PAGE_SIZE,
          offset,
          ...(channel ? { exportMethod: channel } : {}),
          ...(from.value ? { dateFrom: from.value } : {}),
          ...(to.value ? { dateTo: to.value } : {}),
        },
      },
    });
    if (!data) return box.say(messageOf(error, response), "error");
    total = data.totalCount;
    all.checked = false;
    rows.replaceChildren(...data.data.map(entryRow));
    if (data.data.length === 0) rows.append(el("tr", {}, el("td", { colspan: "7" }, "No leads here yet.")));
    const last = Math.min(offset + PAGE_SIZE, total);
    pageInfo.textContent = total === 0 ? "" : `${offset + 1}–${last} of ${total}`;
    previous.disabled = offset === 0;
    next.disabled = last >= total;
  }

  function chosen(): number[] | undefined {
    if (selected.size > 0) return [...selected];
    box.say("Select at least one lead first.", "error");
    return undefined;
  }

  /** Starts long work at once (`Prefer: respond-async`) and follows it; null after an error shown. */
  async function startAndFollow(
    start: () => Promise<{ data?: Blob; error?: unknown; response: Response }>,
  ): Promise<{ body: Blob; response: Response } | null> {
    const { data, error, response } = await start();
    if (!data) {
      box.say(messageOf(error, response), "error");
      return null;
    }
    if (response.status !== 202) return { body: data, response };
    const outcome = await followJob(await jsonOf<JobAccepted>(data), progress);
    if (!outcome.body || !outcome.response.ok) {
      box.say(jobMessage(outcome), "error");
      return null;
    }
    return { body: outcome.body, response: outcome.response };
  }

  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    offset = 0;
    selected.clear(); // a selection is of the leads shown
    void load();
  });
  previous.addEventListener("click", () => {
    offset = Math.max(0, offset - PAGE_SIZE);
    void load();
  });
  next.addEventListener("click", () => {
    offset += PAGE_SIZE;
    void load();
  });
  all.addEventListener("change", () => {
    for (const input of rows.querySelectorAll<HTMLInputElement>("input.select-entry")) {
      input.checked = all.checked;
      const id = Number(input.value);
      if (all.checked) selected.add(id);
      else selected.delete(id);
    }
  });

  refresh.addEventListener("click", () => {
    const trackingIds = chosen();
    if (!trackingIds) return;
    void (async () => {
      refresh.disabled = true;
      box.say(`Refreshing ${trackingIds.length} leads…`);
      const done = await startAndFollow(() =>
        api.POST("/api/v1/lead-export-history/refresh", {
          params: { header: { Prefer: "respond-async", "Idempotency-Key": idempotencyKey() } },
          body: { trackingIds },
          parseAs: "blob",
        }),
      );
      refresh.disabled = false;
      if (!done) return;
      const answer = (await jsonOf<{ data: RefreshResult }>(done.body)).data;
      const changed = answer.results.filter((r) => r.changed).length;
      const message = `Refreshed ${answer.refreshed} leads; ${changed} changed since you received them.`;
      progress.finished(message);
      box.say(message);
      await load();
    })();
  });

  reexport.addEventListener("click", () => {
    const trackingIds = chosen();
    if (!trackingIds) return;
    void (async () => {
      reexport.disabled = true;
      result.replaceChildren();
      box.say(`Re-exporting ${trackingIds.length} leads…`);
      const done = await startAndFollow(() =>
        api.POST("/api/v1/lead-export-history/re-export", {
          params: { header: { Prefer: "respond-async", "Idempotency-Key": idempotencyKey() } },
          body: { trackingIds, ...(format.value ? { formatId: Number(format.value) } : {}) },
          parseAs: "blob",
        }),
      );
      reexport.disabled = false;
      if (!done) return;
      const name = fileNameOf(done.response, "re-export");
      progress.finished(`Finished: ${trackingIds.length} leads re-exported.`);
      box.say(`Re-exported ${trackingIds.length} leads into ${name}; nothing was charged.`);
      // The file is in this page's memory: a link to it (it is also in the export history).
      const link = el(
        "a",
        { href: URL.createObjectURL(done.body), download: name, id: "reexport-download", class: "download" },
        `Download ${name}`,
      );
      result.replaceChildren(el("p", {}, link));
      await reloadFiles();
    })();
  });

  async function loadFormats(): Promise<void> {
    const { data } = await api.GET("/api/v1/export-formats");
    if (data)
      format.append(
        ...data.data.map((f) => el("option", { value: String(f.id) }, `${f.name} (${f.fileType})`)),
      );
  }

  return {
    node,
    load: async () => {
      await Promise.all([load(), loadFormats()]);
    },
  };
}
