import type { components } from "../../../generated/api.js";
import { el } from "./dom.js";

type Run = components["schemas"]["EnrichmentRun"];

/** Where each status of a run stands, in words. */
const PHASE: Record<Run["status"], string> = {
  queued: "Waiting to start",
  matching: "Looking up the database",
  scraping: "Reading websites",
  merging: "Writing the result file",
  delivering: "Sending the result e-mail",
  completed: "Completed",
  partial: "Stopped early",
  failed: "Failed",
};

/**
 * The progress of an enrichment run: the same `<progress>` bar and text as `progress.ts` shows for
 * a job, fed by the run's own record (`status`, `urls.processed` of `urls.total`) instead of a
 * job's 202 answer, which a run does not have.
 */
export interface RunProgressView {
  node: HTMLElement;
  running(run: Run): void;
  finished(run: Run): void;
  failed(): void;
}

export function runProgressView(id: string, label: string): RunProgressView {
  const bar = el("progress", { id: `${id}-bar`, max: "1", "aria-label": label });
  const text = el("span", { id: `${id}-text` });
  const node = el("div", { id, class: "progress", hidden: true }, bar, text);
  const draw = (run: Run) => {
    node.hidden = false;
    const { processed, total } = run.urls;
    if (total > 0) {
      bar.max = total;
      bar.value = processed;
    } else {
      bar.removeAttribute("value");
    }
    text.textContent = `Run #${run.id}: ${PHASE[run.status]}, ${processed} of ${total} websites done.`;
  };
  return {
    node,
    running(run) {
      draw(run);
      node.dataset.state = "running";
    },
    finished(run) {
      draw(run);
      node.dataset.state = run.status === "failed" ? "failed" : "finished";
    },
    failed() {
      node.dataset.state = "failed";
      node.hidden = true;
    },
  };
}
