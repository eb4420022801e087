import type { components } from "../../../generated/api.js";
import { api, messageOf } from "./api.js";
import { el, messageBox, show } from "./dom.js";
import { actionButton, emptyRow, fillTable, when } from "./format.js";
import { followJob, idempotencyKey, jobMessage, jsonOf, progressView } from "./progress.js";

type Schedule = components["schemas"]["EmailSchedule"];
type SendResult = components["schemas"]["ScheduleSendResult"];

/** Seconds the trigger waits for the send before answering 202 with a job to follow. */
const TRIGGER_WAIT_SECONDS = 10;

function stateOf(schedule: Schedule): string {
  if (schedule.isActive) return "active";
  return schedule.pauseReason === "insufficient_credits" ? "paused: not enough credits" : "paused";
}

function describeSend(result: SendResult): string {
  if (!result.sent) return `Nothing sent: ${result.message}`;
  return `Sent ${result.leadCount} lead(s) to ${result.recipients} recipient(s) for ${result.creditsUsed} credit(s).`;
}

/**
 * The e-mail schedules page: the account's schedules with pause / resume and "send now" (the
 * trigger, a long-running request: its progress is shown while it runs, then its answer).
 */
export async function schedulesPage(): Promise<void> {
  const box = messageBox();
  const progress = progressView("schedule-send", "Sending the schedule");
  const table = el("table", { id: "schedules", "aria-label": "E-mail schedules" });
  fillTable(table, ["Schedule"], [emptyRow(1, "Loading schedules…")]);
  show(
    el("h1", {}, "E-mail schedules"),
    el("p", {}, "Each schedule e-mails the new leads of a saved search at its interval."),
    box.node,
    progress.node,
    table,
  );

  async function refresh(): Promise<void> {
    const { data, error, response } = await api.GET("/api/v1/email-schedules");
    if (!data) return box.say(messageOf(error, response), "error");
    const headings = [
      "Name",
      "Every",
      "State",
      "Recipients",
      "Last sent",
      "Sent so far",
      "Next run",
      "Actions",
    ];
    fillTable(
      table,
      headings,
      data.data.length === 0
        ? [
            emptyRow(
              headings.length,
              "No schedule yet. Create one with the API (POST /api/v1/email-schedules).",
            ),
          ]
        : data.data.map(row),
    );
  }

  function row(schedule: Schedule): HTMLElement {
    const label = schedule.name;
    const toggle = actionButton(
      schedule.isActive ? "Pause" : "Resume",
      {
        "data-toggle": String(schedule.id),
        "aria-label": `${schedule.isActive ? "Pause" : "Resume"} ${label}`,
      },
      async () => {
        const { data, error, response } = await api.PATCH("/api/v1/email-schedules/{id}", {
          params: { path: { id: schedule.id } },
          body: { isActive: !schedule.isActive },
        });
        if (!data) return box.say(messageOf(error, response), "error");
        box.say(`"${data.data.name}" is ${data.data.isActive ? "active again" : "paused"}.`);
        await refresh();
      },
    );
    const send = actionButton(
      "Send now",
      { "data-trigger": String(schedule.id), "aria-label": `Send now: ${label}` },
      () => trigger(schedule),
    );
    return el(
      "tr",
      { "data-schedule-id": String(schedule.id) },
      el("td", { class: "wrap" }, label),
      el("td", {}, `${schedule.intervalValue} ${schedule.intervalUnit}`),
      el("td", { class: "state" }, stateOf(schedule)),
      el("td", { class: "wrap" }, schedule.recipients.map((r) => r.email).join(", ") || "—"),
      el("td", {}, when(schedule.lastSentAt)),
      el("td", {}, String(schedule.totalSentCount)),
      el("td", {}, schedule.isActive ? when(schedule.nextRunAt, "—") : "—"),
      el("td", {}, el("div", { class: "actions" }, toggle, send)),
    );
  }

  async function trigger(schedule: Schedule): Promise<void> {
    box.say(`Sending "${schedule.name}"…`);
    const { data, error, response } = await api.POST("/api/v1/email-schedules/{id}/trigger", {
      params: {
        path: { id: schedule.id },
        header: { "Idempotency-Key": idempotencyKey(), Prefer: `wait=${TRIGGER_WAIT_SECONDS}` },
      },
    });
    if (!data) return box.say(messageOf(error, response), "error");
    let result: SendResult;
    if ("jobId" in data) {
      // Still running: follow the job, showing its progress, until its answer.
      const outcome = await followJob(data, progress);
      if (!outcome.body || !outcome.response.ok) return box.say(jobMessage(outcome), "error");
      result = (await jsonOf<{ data: SendResult }>(outcome.body)).data;
      progress.finished("Done.");
    } else {
      result = data.data;
    }
    box.say(`"${schedule.name}": ${describeSend(result)}`);
    await refresh();
  }

  await refresh();
}
