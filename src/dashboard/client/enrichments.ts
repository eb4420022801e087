import type { components } from "../../../generated/api.js";
import { api, messageOf } from "./api.js";
import { el, messageBox, show } from "./dom.js";
import { actionButton, emptyRow, fillTable, when } from "./format.js";
import { runProgressView, type RunProgressView } from "./enrichment-progress.js";
import { resultPreview } from "./enrichment-results.js";

type Run = components["schemas"]["EnrichmentRun"];

/** Milliseconds between two polls of a running run (`GET /enrichments/{id}` answers at once). */
const POLL_MS = 1_000;

/** Statuses after which a run changes no more. */
const FINAL = new Set<Run["status"]>(["completed", "partial", "failed"]);

/** Credits (0.1 steps) as text: 1.1, 3, 0.5. */
function credits(value: number): string {
  return String(Math.round(value * 10) / 10);
}

/** The run's credits as the contract names them: the total, whether it is `final`, the `limit`. */
export function creditsText(run: Run): string {
  const state = run.credits.final ? "final" : "so far, not final";
  return `${credits(run.credits.total)} credits (${state}; limit ${credits(run.credits.limit)})`;
}

function errorText(error: unknown, response: Response): string {
  const details =
    typeof error === "object" && error !== null && "details" in error && Array.isArray(error.details)
      ? (error.details as components["schemas"]["ErrorDetail"][])
      : [];
  const parts = details.map((d) => `${d.path.join(".")}: ${d.message}`);
  return [messageOf(error, response), ...parts].join(" ");
}

/** The URLs typed in the text area: one per line, blank lines left out. */
function urlsOf(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/**
 * The enrichments page: submit a list of websites (`POST /enrichments`), the account's runs
 * (`GET /enrichments`), a running run followed with a progress bar (`GET /enrichments/{id}` every
 * second) to its counts and final credits, and its result file (`GET /enrichments/{id}/download`):
 * downloaded, and its first rows shown as text. The heading and the form are drawn before any call.
 */
export function enrichmentsPage(): void {
  const box = messageBox();
  const progress: RunProgressView = runProgressView("enrichment-progress", "Enrichment progress");
  const summary = el("section", { id: "enrichment-run", "aria-label": "The followed run" });
  const table = el("table", { id: "enrichment-runs" });
  const runsTable = el(
    "div",
    { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "Enrichment runs" },
    table,
  );
  const urls = el("textarea", {
    id: "enrichment-urls",
    rows: "8",
    cols: "60",
    spellcheck: "false",
    "aria-describedby": "enrichment-urls-hint",
  });
  const contact = el(
    "select",
    { id: "enrichment-contact" },
    el("option", { value: "either" }, "A phone number or an e-mail address"),
    el("option", { value: "phone" }, "A phone number"),
    el("option", { value: "email" }, "An e-mail address"),
  );
  const maxCredits = el("input", {
    id: "enrichment-max-credits",
    type: "number",
    min: "0",
    step: "0.1",
    size: "8",
  });
  const percent = el("input", {
    id: "enrichment-db-percent",
    type: "number",
    min: "0",
    max: "100",
    step: "1",
    size: "4",
  });
  const emailResults = el(
    "select",
    { id: "enrichment-email" },
    el("option", { value: "" }, "As in my account settings"),
    el("option", { value: "yes" }, "Yes"),
    el("option", { value: "no" }, "No"),
  );
  const submit = el("button", { type: "submit", id: "enrichment-submit" }, "Enrich these websites");
  const form = el(
    "form",
    { id: "enrichment-form", novalidate: true },
    el("label", { for: "enrichment-urls" }, "Websites, one per line"),
    urls,
    el(
      "p",
      { id: "enrichment-urls-hint", class: "hint" },
      "Full addresses with paths are fine; duplicates of one site are removed. Each site is looked up " +
        "in our lead database first (1 credit when new to you, free when you already have it), else " +
        "read from the website (0.1 credit). Sites without the contact details you ask for cost nothing.",
    ),
    el("label", { for: "enrichment-contact" }, "A result must have"),
    contact,
    el(
      "label",
      { for: "enrichment-max-credits" },
      "At most this many credits (optional; default: your balance)",
    ),
    maxCredits,
    el(
      "label",
      { for: "enrichment-db-percent" },
      "Share of them for database matches, % (optional; default 100)",
    ),
    percent,
    el("label", { for: "enrichment-email" }, "E-mail me the result file"),
    emailResults,
    submit,
  );

  show(
    el("h1", {}, "Enrichments"),
    el("p", {}, "Find the phone numbers and e-mail addresses of a list of business websites."),
    form,
    box.node,
    progress.node,
    summary,
    el("section", { "aria-labelledby": "runs-heading" }, el("h2", { id: "runs-heading" }, "Runs"), runsTable),
  );
  fillTable(table, ["Run"], [emptyRow(1, "Loading runs…")]);
  table.prepend(el("caption", {}, "Your runs, newest first"));

  /** The run being followed; a newer follow ends the older one's loop. */
  let followed = 0;

  async function refresh(): Promise<void> {
    const { data, error, response } = await api.GET("/api/v1/enrichments", {
      params: { query: { limit: 25 } },
    });
    if (!data) return box.say(messageOf(error, response), "error");
    const headings = [
      "Run",
      "Submitted",
      "Status",
      "Websites",
      "From the database",
      "Read live",
      "Credits",
      "",
    ];
    fillTable(
      table,
      headings,
      data.data.length === 0 ? [emptyRow(headings.length, "No runs yet.")] : data.data.map(row),
    );
    table.prepend(el("caption", {}, "Your runs, newest first"));
  }

  function row(run: Run): HTMLElement {
    const action = run.result.ready
      ? actionButton("Download", { class: "download", "aria-label": `Download run ${run.id}` }, () =>
          download(run.id),
        )
      : FINAL.has(run.status)
        ? "no file"
        : actionButton("Show progress", { "aria-label": `Show the progress of run ${run.id}` }, () =>
            follow(run.id),
          );
    return el(
      "tr",
      { "data-run-id": String(run.id) },
      el("td", {}, `#${run.id}`),
      el("td", {}, when(run.createdAt)),
      el("td", { class: "status" }, run.status),
      el("td", {}, `${run.urls.processed} of ${run.urls.total}`),
      el("td", {}, String(run.database.delivered)),
      el("td", {}, String(run.live.delivered)),
      el("td", { class: "credits" }, creditsText(run)),
      el("td", {}, action),
    );
  }

  async function download(id: number): Promise<void> {
    const { data, error, response } = await api.GET("/api/v1/enrichments/{id}/download", {
      params: { path: { id } },
    });
    if (!data) return box.say(messageOf(error, response), "error");
    box.say(`Downloading the results of run #${id}.`);
    // A signed link (5 minutes) answered with `Content-Disposition: attachment`: the page stays.
    window.location.assign(data.data.downloadUrl);
  }

  /** Polls the run until it is final, showing its progress, then its counts, credits and results. */
  async function follow(id: number): Promise<void> {
    followed = id;
    summary.replaceChildren();
    for (;;) {
      const { data, error, response } = await api.GET("/api/v1/enrichments/{id}", {
        params: { path: { id } },
      });
      if (followed !== id) return;
      if (!data) {
        progress.failed();
        return box.say(messageOf(error, response), "error");
      }
      const run = data.data;
      if (!FINAL.has(run.status)) {
        progress.running(run);
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        continue;
      }
      progress.finished(run);
      box.say(
        run.status === "failed"
          ? `Run #${id} failed: ${run.error ?? "no reason given"}. ${creditsText(run)}.`
          : `Run #${id} is ${run.status}: ${creditsText(run)}.`,
        run.status === "failed" ? "error" : "info",
      );
      summary.replaceChildren(runSummary(run));
      await refresh();
      if (run.result.ready) await showResults(run);
      return;
    }
  }

  function runSummary(run: Run): HTMLElement {
    const item = (term: string, value: string, cls?: string) => [
      el("dt", {}, term),
      el("dd", cls ? { class: cls } : {}, value),
    ];
    return el(
      "div",
      { id: "enrichment-summary" },
      el("h2", {}, `Run #${run.id}`),
      el(
        "dl",
        { class: "summary" },
        ...item("Status", run.status),
        ...item(
          "Websites",
          `${run.urls.total} (${run.urls.duplicatesRemoved} duplicates removed, ${run.urls.skippedInvalid} not usable)`,
        ),
        ...item(
          "From the database",
          `${run.database.charged} new to you, ${run.database.free} already yours, ` +
            `${run.database.noRequestedContact} without the contact asked for, ` +
            `${run.database.skippedOverBudget} over the limit`,
        ),
        ...item(
          "Read live",
          `${run.live.delivered} found, ${run.live.noRequestedContact} without the contact asked for, ` +
            `${run.live.failed} unreachable, ${run.live.skippedOverBudget} over the limit`,
        ),
        ...item(
          "Credits",
          `database ${credits(run.credits.databaseCharged)} + live ${credits(run.credits.liveCharged)} = ` +
            creditsText(run),
          "run-credits",
        ),
        ...(run.error ? item("Note", run.error) : []),
      ),
      run.result.ready
        ? actionButton("Download the results (CSV)", { id: "enrichment-download" }, () => download(run.id))
        : null,
    );
  }

  async function showResults(run: Run): Promise<void> {
    const { data, error, response } = await api.GET("/api/v1/enrichments/{id}/download", {
      params: { path: { id: run.id } },
    });
    if (!data) return box.say(messageOf(error, response), "error");
    const preview = await resultPreview(data.data.downloadUrl, run.result.rowCount);
    if (followed === run.id) document.getElementById("enrichment-summary")?.append(preview);
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void (async () => {
      submit.disabled = true;
      try {
        await start();
      } finally {
        submit.disabled = false;
      }
    })();
  });

  async function start(): Promise<void> {
    box.say("Submitting…");
    const { data, error, response } = await api.POST("/api/v1/enrichments", {
      body: {
        urls: urlsOf(urls.value),
        contactTypes: contact.value as "either" | "phone" | "email",
        ...(maxCredits.value === "" ? {} : { maxCredits: Number(maxCredits.value) }),
        ...(percent.value === "" ? {} : { databaseMatchPercent: Number(percent.value) }),
        ...(emailResults.value === "" ? {} : { emailResults: emailResults.value === "yes" }),
      },
    });
    if (!data) return box.say(errorText(error, response), "error");
    const run = data.data;
    box.say(
      `Run #${run.id} started: ${run.urlCount} website(s)` +
        (run.duplicatesRemoved > 0 ? `, ${run.duplicatesRemoved} duplicate(s) removed` : "") +
        (run.skippedInvalid > 0 ? `, ${run.skippedInvalid} not a usable website address (free)` : "") +
        ".",
    );
    urls.value = "";
    void refresh();
    await follow(run.id);
  }

  void refresh();
}
