import { sql } from "kysely";
import type { Db, Trx } from "../../db/database.js";
import { isCrmProvider } from "../providers.js";
import { deleteIntegration } from "../service.js";
import { usableCrm } from "./availability.js";
import { CrmApiError } from "./errors.js";
import { findConnection } from "./repository.js";
import type { CrmRuntime } from "./runtime.js";

/** Revokes the tokens of a deleted CRM integration at the CRM (best effort, after the delete). */
export const CRM_REVOKE_TASK = "integrations__revoke_crm_tokens";

/** Attempts of a revocation (graphile-worker's back-off between them); then it is given up. */
const REVOKE_ATTEMPTS = 5;

/** A revocation's job payload: the tokens stay encrypted (the token key's format). */
export interface RevokePayload {
  integrationId: number;
  provider: string;
  refreshToken: string;
  apiBase: string;
  metadata: Record<string, unknown>;
}

/**
 * `DELETE /integrations/{id}`: deletes the integration and, for a CRM, queues the revocation of
 * its tokens in the same transaction, so a deleted integration's grant is revoked even when the
 * process stops right after (and no revocation is queued for a delete that did not happen).
 */
export async function deleteIntegrationRevokingCrm(db: Db, accountId: number, id: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const connection = await findConnection(trx, id);
    await deleteIntegration(trx, accountId, id);
    if (!connection || connection.accountId !== accountId) return;
    await enqueueRevoke(trx, {
      integrationId: id,
      provider: connection.provider,
      refreshToken: connection.refreshToken,
      apiBase: connection.apiBase,
      metadata: connection.metadata,
    });
  });
}

async function enqueueRevoke(trx: Trx, payload: RevokePayload): Promise<void> {
  await sql`select graphile_worker.add_job(
      ${CRM_REVOKE_TASK}::text,
      ${JSON.stringify(payload)}::json,
      max_attempts => ${REVOKE_ATTEMPTS}::int
    )`.execute(trx);
}

function payloadOf(value: unknown): RevokePayload | undefined {
  const p = value as Partial<RevokePayload> | null;
  if (
    !p ||
    typeof p.integrationId !== "number" ||
    typeof p.provider !== "string" ||
    typeof p.refreshToken !== "string" ||
    typeof p.apiBase !== "string"
  ) {
    return undefined;
  }
  return {
    ...(p as RevokePayload),
    metadata: p.metadata && typeof p.metadata === "object" ? p.metadata : {},
  };
}

/**
 * Revokes one deleted integration's refresh token at its CRM. Done or given up when the CRM
 * answers (a 4xx means the grant is already gone), when the CRM is no longer configured here, or
 * when the token cannot be read with the configured keys; a network failure, 429 or 5xx throws,
 * so graphile-worker tries again later (5 attempts).
 */
export async function revokeDeleted(
  runtime: CrmRuntime,
  value: unknown,
): Promise<"revoked" | "gone" | "skipped"> {
  const p = payloadOf(value);
  if (!p || !isCrmProvider(p.provider)) return "skipped";
  const usable = usableCrm(runtime.config, p.provider);
  if (!usable) return "skipped";
  let refreshToken: string;
  try {
    refreshToken = runtime.cipher.decrypt(p.refreshToken);
  } catch {
    return "skipped";
  }
  try {
    await usable.adapter.revoke(usable.client, runtime.agentFor, {
      refreshToken,
      apiBase: p.apiBase,
      metadata: p.metadata,
    });
    return "revoked";
  } catch (err) {
    if (
      err instanceof CrmApiError &&
      err.statusCode !== null &&
      err.statusCode >= 400 &&
      err.statusCode < 500 &&
      err.statusCode !== 429
    ) {
      return "gone";
    }
    throw err;
  }
}
