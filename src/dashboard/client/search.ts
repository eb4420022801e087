import type { components } from "../../../generated/api.js";
import { api, messageOf } from "./api.js";
import { el, messageBox, show } from "./dom.js";
import { followJob, idempotencyKey, jobMessage, jsonOf, progressView } from "./progress.js";
import { filterForm, type FilterForm, type FormFilters } from "./search-filters.js";
import { boughtView, previewView } from "./search-results.js";
import { savedSearches } from "./search-saved.js";

type ExportLinks = components["schemas"]["LeadExportLinks"];
type ExportFormat = components["schemas"]["ExportFormat"];

/** The query of a preview or a paid search: the form's filters, the page and its size. */
function searchQuery(
  form: FilterForm,
): FormFilters & { page: number; limit: number; excludePurchased?: boolean } {
  return {
    ...form.read(),
    page: form.page(),
    limit: form.limit(),
    ...(form.excludePurchased() ? { excludePurchased: true } : {}),
  };
}

/** A whole number typed in an optional field, or undefined when empty. */
function wholeOrUndefined(input: HTMLInputElement): number | undefined {
  return input.value === "" ? undefined : Math.max(0, Math.floor(Number(input.value)));
}

/**
 * The lead search page: the filter form (drawn at once, before any call returns), the free
 * masked preview, buying a page, exporting with a saved format (with the job's progress and the
 * download links), presets and keyword lists.
 */
export function searchPage(): void {
  const box = messageBox();
  const form = filterForm();
  const results = el("div", { id: "results" });
  const progress = progressView("export-progress", "Export progress");
  const exportResult = el("div", { id: "export-result" });

  const maxCredits = el("input", { id: "max-credits", type: "number", min: "0", size: "6" });
  const buy = el("button", { type: "button", id: "buy-button" }, "Buy this page");
  const format = el("select", { id: "export-format" }, el("option", { value: "" }, "Account default"));
  const maxLeads = el("input", {
    id: "export-max-leads",
    type: "number",
    min: "1",
    max: "100000",
    size: "7",
  });
  const exportButton = el("button", { type: "button", id: "export-button" }, "Export");

  const actions = el(
    "section",
    { id: "search-actions", class: "actions", "aria-label": "Buy or export" },
    el(
      "div",
      { class: "group" },
      el("h2", {}, "Buy a page"),
      el("p", { class: "hint" }, "1 credit per lead new to you; leads you already received are free."),
      el("label", { for: "max-credits" }, "At most this many credits (optional)"),
      maxCredits,
      buy,
    ),
    el(
      "div",
      { class: "group" },
      el("h2", {}, "Export"),
      el("label", { for: "export-format" }, "Export format"),
      format,
      el("label", { for: "export-max-leads" }, "At most this many leads (optional)"),
      maxLeads,
      exportButton,
    ),
  );
  const saved = savedSearches(form, box);

  show(
    el("h1", {}, "Lead search"),
    form.node,
    actions,
    saved.node,
    box.node,
    progress.node,
    exportResult,
    results,
  );

  form.node.addEventListener("submit", (event) => {
    event.preventDefault();
    void (async () => {
      box.say("Previewing…");
      const { data, error, response } = await api.GET("/api/v1/leads/preview", {
        params: { query: searchQuery(form) },
      });
      if (!data) return box.say(messageOf(error, response), "error");
      box.say(`Preview: ${data.data.summary.totalMatches} matching leads. Nothing was charged.`);
      results.replaceChildren(previewView(data.data));
    })();
  });

  buy.addEventListener("click", () => {
    void (async () => {
      buy.disabled = true;
      box.say("Buying the page…");
      const credits = wholeOrUndefined(maxCredits);
      const { data, error, response } = await api.GET("/api/v1/leads", {
        params: {
          query: { ...searchQuery(form), ...(credits === undefined ? {} : { maxCredits: credits }) },
        },
      });
      buy.disabled = false;
      if (!data) return box.say(messageOf(error, response), "error");
      const capped = response.headers.get("X-Credits-Capped") === "true";
      box.say(
        `Bought ${data.data.leads.length} leads for ${data.data.creditsUsed} credits.` +
          (capped ? " Your balance did not cover every new lead." : ""),
      );
      results.replaceChildren(boughtView(data.data));
    })();
  });

  exportButton.addEventListener("click", () => {
    void (async () => {
      exportButton.disabled = true;
      exportResult.replaceChildren();
      box.say("Export started.");
      try {
        const links = await runExport(form, format, maxLeads, progress);
        if (typeof links === "string") return box.say(links, "error");
        box.say(`Exported ${links.leadCount} leads for ${links.creditsUsed} credits.`);
        progress.finished(`Finished: ${links.leadCount} leads, ${links.files.length} file(s).`);
        exportResult.replaceChildren(exportLinksView(links));
      } finally {
        exportButton.disabled = false;
      }
    })();
  });

  void loadFormats(format, box);
  void saved.load();
}

/**
 * Starts the export as a job (`Prefer: respond-async`, answered 202 at once) and follows it to its
 * JSON answer with the files' links (`inline: false`). Returns the answer or a readable error.
 */
async function runExport(
  form: FilterForm,
  format: HTMLSelectElement,
  maxLeads: HTMLInputElement,
  progress: ReturnType<typeof progressView>,
): Promise<ExportLinks | string> {
  const cap = wholeOrUndefined(maxLeads);
  const { data, error, response } = await api.POST("/api/v1/leads/export", {
    params: { header: { Prefer: "respond-async", "Idempotency-Key": idempotencyKey() } },
    body: {
      filters: form.read(),
      inline: false,
      ...(form.excludePurchased() ? { excludePurchased: true } : {}),
      ...(format.value === "" ? {} : { formatId: Number(format.value) }),
      ...(cap === undefined ? {} : { maxLeads: cap }),
    },
  });
  if (!data) return messageOf(error, response);
  if (response.status !== 202) return (data as { data: ExportLinks }).data;
  const outcome = await followJob(data as components["schemas"]["JobAccepted"], progress);
  if (!outcome.body || !outcome.response.ok) return jobMessage(outcome);
  return (await jsonOf<{ data: ExportLinks }>(outcome.body)).data;
}

/** The export's files, each with its download link (signed, valid 15 minutes; also on the Exports page). */
function exportLinksView(links: ExportLinks): HTMLElement {
  return el(
    "div",
    { class: "files" },
    el("p", {}, "Your files (the links work for 15 minutes; the Exports page has them for 90 days):"),
    el(
      "ul",
      { id: "export-files" },
      ...links.files.map((file) =>
        el(
          "li",
          {},
          el(
            "a",
            { href: file.directDownloadUrl, download: file.fileName, class: "download" },
            `Download ${file.fileName}`,
          ),
          ` (${file.leadCount} leads, ${file.size} bytes)`,
        ),
      ),
    ),
  );
}

/** Fills the export format choice with the account's saved formats (the default marked). */
async function loadFormats(select: HTMLSelectElement, box: ReturnType<typeof messageBox>): Promise<void> {
  const { data, error, response } = await api.GET("/api/v1/export-formats");
  if (!data) return box.say(messageOf(error, response), "error");
  const formats: ExportFormat[] = data.data;
  select.append(
    ...formats.map((f) =>
      el("option", { value: String(f.id) }, `${f.name} (${f.fileType}${f.isDefault ? ", default" : ""})`),
    ),
  );
}
