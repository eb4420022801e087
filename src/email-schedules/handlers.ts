import type { Db } from "../db/database.js";
import type { Handlers } from "../http/contract.js";
import { errors } from "../http/errors.js";
import { runLongRunning, type LongRunningDeps } from "../jobs/index.js";
import { toEmailScheduleBody } from "./presenter.js";
import { findSchedule } from "./repository.js";
import { presetFiltersOf, runInProgress } from "./run/send.js";
import { regularRunInProgress } from "./schedule.js";
import {
  createEmailSchedule,
  deleteEmailSchedule,
  listEmailSchedules,
  updateEmailSchedule,
} from "./service.js";
import { scheduleTriggerJob } from "./trigger/kind.js";

type ScheduleOperations =
  | "listEmailSchedules"
  | "createEmailSchedule"
  | "updateEmailSchedule"
  | "deleteEmailSchedule"
  | "triggerEmailSchedule";

/** The five `/email-schedules` operations. */
export function emailScheduleHandlers(
  deps: LongRunningDeps & { db: Db; publicBaseUrl: string },
): Handlers<ScheduleOperations> {
  const { db } = deps;
  return {
    async listEmailSchedules({ caller }) {
      const schedules = await listEmailSchedules(db, caller.accountId);
      return { status: 200, body: { data: schedules.map(toEmailScheduleBody) } };
    },
    async createEmailSchedule({ caller, body }) {
      const schedule = await createEmailSchedule(db, caller.accountId, body);
      return { status: 201, body: { data: toEmailScheduleBody(schedule) } };
    },
    async updateEmailSchedule({ caller, params, body }) {
      const schedule = await updateEmailSchedule(
        db,
        caller.accountId,
        params.id,
        body as Record<string, unknown>,
      );
      return { status: 200, body: { data: toEmailScheduleBody(schedule) } };
    },
    async deleteEmailSchedule({ caller, params }) {
      await deleteEmailSchedule(db, caller.accountId, params.id);
      return { status: 200, body: { data: { message: "E-mail schedule deleted." } } };
    },
    async triggerEmailSchedule(request) {
      const { accountId } = request.caller;
      const schedule = await findSchedule(db, accountId, request.params.id);
      if (!schedule) throw errors.notFound("E-mail schedule not found.");
      if (!schedule.isActive) {
        throw errors.badRequest("The schedule is paused; resume it (isActive true) before sending it.");
      }
      // Checked first so nothing is queued; the job checks again when it commits.
      if (regularRunInProgress(schedule, new Date())) throw runInProgress();
      if (!(await presetFiltersOf(db, schedule))) {
        throw errors.badRequest(
          "The schedule's filter preset no longer exists or holds no positive filter; choose another preset.",
        );
      }
      return runLongRunning(request, deps, {
        kind: scheduleTriggerJob,
        accountId,
        input: { scheduleId: schedule.id, publicBaseUrl: deps.publicBaseUrl },
      });
    },
  };
}
