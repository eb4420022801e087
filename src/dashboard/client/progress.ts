import type { components } from "../../../generated/api.js";
import { api, messageOf } from "./api.js";
import { el } from "./dom.js";

type JobAccepted = components["schemas"]["JobAccepted"];

/** Seconds each poll of a running job waits on the server (`Prefer: wait=N`) before answering 202. */
const POLL_WAIT_SECONDS = 2;

/**
 * The progress of long work (an export, a re-export): a `<progress>` bar and its text, updated
 * from the job's 202 answers (`phase`, `progress.done` of `progress.total` `label`).
 */
export interface ProgressView {
  node: HTMLElement;
  running(job: JobAccepted): void;
  finished(text: string): void;
  failed(): void;
}

export function progressView(id: string, label: string): ProgressView {
  const bar = el("progress", { id: `${id}-bar`, max: "1", "aria-label": label });
  const text = el("span", { id: `${id}-text` });
  const node = el("div", { id, class: "progress", hidden: true }, bar, text);
  return {
    node,
    running(job) {
      node.hidden = false;
      node.dataset.state = "running";
      const { done, total, label: unit } = job.progress;
      if (total > 0) {
        bar.max = total;
        bar.value = done;
      } else {
        bar.removeAttribute("value"); // indeterminate until the job knows its size
      }
      const seconds = Math.round(job.elapsedMs / 1000);
      text.textContent =
        total > 0
          ? `${job.phase}: ${done} of ${total} ${unit} (${seconds} s)`
          : `${job.phase}… (${seconds} s)`;
    },
    finished(message) {
      node.hidden = false;
      node.dataset.state = "finished";
      bar.max = 1;
      bar.value = 1;
      text.textContent = message;
    },
    failed() {
      node.dataset.state = "failed";
      node.hidden = true;
    },
  };
}

/** The final answer of a job: its status and body (a file's bytes, or JSON text). */
export interface JobOutcome {
  response: Response;
  body: Blob | undefined;
  error: unknown;
}

/**
 * Follows a job from its 202 answer until it finishes (`GET /jobs/{jobId}`, which answers 202
 * with the progress while it runs, then exactly the original answer: a file or JSON, or the
 * original error). Each 202 updates the view.
 */
export async function followJob(first: JobAccepted, view: ProgressView): Promise<JobOutcome> {
  view.running(first);
  for (;;) {
    const { data, error, response } = await api.GET("/api/v1/jobs/{jobId}", {
      params: { path: { jobId: first.jobId }, header: { Prefer: `wait=${POLL_WAIT_SECONDS}` } },
      parseAs: "blob",
    });
    if (response.status === 202 && data) {
      view.running(await jsonOf<JobAccepted>(data));
      continue;
    }
    if (!data) view.failed();
    return { response, body: data, error };
  }
}

/** A JSON body received as a Blob. */
export async function jsonOf<T>(blob: Blob): Promise<T> {
  return JSON.parse(await blob.text()) as T;
}

/** The readable message of a job's error answer. */
export function jobMessage(outcome: JobOutcome): string {
  return messageOf(outcome.error, outcome.response);
}

/** An Idempotency-Key for one click (8-64 letters, digits, `_` or `-`). */
export function idempotencyKey(): string {
  return `dash-${crypto.randomUUID()}`;
}

/**
 * The file name of a file answer (`Content-Disposition: attachment; filename="..."`), or the
 * fallback.
 */
export function fileNameOf(response: Response, fallback: string): string {
  const header = response.headers.get("Content-Disposition") ?? "";
  const name = /filename="([^"]+)"/.exec(header)?.[1];
  return name ?? fallback;
}
