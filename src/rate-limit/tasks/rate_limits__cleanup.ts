import type { Task } from "graphile-worker";

/** Deletes rate-limit counters whose window ended over an hour ago (runs from the crontab). */
export const rateLimitsCleanup: Task = async (_payload, helpers) => {
  await helpers.withPgClient((client) =>
    client.query("delete from rate_limits where expire is not null and expire < $1", [
      Date.now() - 3_600_000,
    ]),
  );
};
