import type { Task } from "graphile-worker";
import { isCrmProvider } from "../providers.js";
import { openCrm, renewIfDue } from "./access.js";
import { configuredCrms } from "./availability.js";
import { CrmApiError, CrmAuthorizationLostError } from "./errors.js";
import { connectionsDueForRefresh } from "./repository.js";
import { CRM_REVOKE_TASK, revokeDeleted } from "./revoke.js";
import { crmRuntime, type CrmDeps, type CrmRuntime } from "./runtime.js";

/** Renews CRM tokens before they expire, also of integrations nothing is delivered to. */
export const CRM_REFRESH_TASK = "integrations__refresh_crm_tokens";

/** Every 5 minutes, scheduled once per tick across processes (each renewal holds its row lock, so an overlap is harmless). */
export const CRM_REFRESH_CRONTAB = `*/5 * * * * ${CRM_REFRESH_TASK} ?id=${CRM_REFRESH_TASK}\n`;

/** Tokens expiring within this margin are renewed by the background task (three runs of it). */
export const BACKGROUND_REFRESH_MARGIN_MS = 15 * 60_000;

/** Integrations renewed per run at most (the rest on the next run, soonest expiry first). */
const PER_RUN = 200;

/**
 * Renews the tokens of connected CRM integrations that expire within 15 minutes. A refresh the CRM
 * refuses moves that integration to `needs_attention` and alerts its owner (crm/access.ts); a
 * failure of the CRM's token endpoint leaves it for the next run. Never throws for one integration.
 */
export async function refreshDueTokens(
  runtime: CrmRuntime,
  warn?: (message: string) => void,
): Promise<{ renewed: number; lost: number; failed: number }> {
  const counts = { renewed: 0, lost: 0, failed: 0 };
  const providers = [...configuredCrms(runtime.config)];
  const due = await connectionsDueForRefresh(
    runtime.db,
    providers,
    new Date(Date.now() + BACKGROUND_REFRESH_MARGIN_MS),
    PER_RUN,
  );
  for (const row of due) {
    if (!isCrmProvider(row.provider)) continue;
    const open = await openCrm(runtime, row.id, row.provider);
    if (!open) continue;
    try {
      if (await renewIfDue(runtime, open, BACKGROUND_REFRESH_MARGIN_MS)) counts.renewed += 1;
    } catch (err) {
      if (err instanceof CrmAuthorizationLostError) counts.lost += 1;
      else if (err instanceof CrmApiError) {
        counts.failed += 1;
        warn?.(
          `CRM token refresh of integration ${row.id} failed (${err.statusCode ?? "no answer"}); retried later`,
        );
      } else throw err;
    }
  }
  return counts;
}

/** The worker tasks of CRM tokens: the background refresh and revocations after deletes. */
export function crmTaskList(deps: CrmDeps): Record<string, Task> {
  return {
    [CRM_REFRESH_TASK]: async (_payload, helpers) => {
      const counts = await refreshDueTokens(crmRuntime(deps), (m) => helpers.logger.warn(m));
      if (counts.renewed + counts.lost + counts.failed > 0) helpers.logger.info(JSON.stringify(counts));
    },
    [CRM_REVOKE_TASK]: async (payload) => {
      await revokeDeleted(crmRuntime(deps), payload);
    },
  };
}
