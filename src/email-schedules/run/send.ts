import { findAccount } from "../../accounts/repository.js";
import { getAccountWithBalance } from "../../accounts/service.js";
import { chargeDelivery, type DeliveryCharged } from "../../credits/charge.js";
import { spendable } from "../../credits/spendable.js";
import type { Db, Trx } from "../../db/database.js";
import { emitEvent } from "../../events/outbox.js";
import { blacklistedDomains } from "../../export-blacklist/match.js";
import { XLSX_MAX_ROWS } from "../../export-files/errors.js";
import { defaultFileFormat, type FileFormat } from "../../export-files/format.js";
import { formatLeadCapacity } from "../../export-files/split.js";
import { exportFolder } from "../../export-files/store.js";
import { toFileFormat } from "../../export-formats/format.js";
import { resolveExportFormat } from "../../export-formats/service.js";
import type { ExportHistoryEntry } from "../../export-history/entry.js";
import { recordExportFiles } from "../../export-history/service.js";
import { presetSearchFilters } from "../../filter-presets/service.js";
import { ApiError, errors } from "../../http/errors.js";
import type { SearchFilters } from "../../leads/search/filters.js";
import { tuneSearch } from "../../leads/search/settings.js";
import { recordDeliveredLeads } from "../../leads/versions.js";
import { enqueueMail } from "../../mail/queue.js";
import type { FileStorage } from "../../storage/file-storage.js";
import {
  findPresetFilters,
  findSchedule,
  findScheduleById,
  recordSend,
  replaceReservoir,
} from "../repository.js";
import {
  FIRST_RUN_CAP,
  MAX_RESERVOIR_LEADS,
  nextRunAfter,
  regularRunInProgress,
  RUN_LEASE_MS,
  sendCap,
  type EmailSchedule,
} from "../schedule.js";
import { findMaxLeadId, findSendCandidates } from "./candidates.js";
import { planFileSets } from "./distribution.js";
import {
  allFiles,
  DEFAULT_ASSIGNEE_HEADER,
  DEFAULT_FILE_NAME_HEADER,
  writeSendFiles,
  type CombinedSpec,
  type SendFiles,
} from "./files.js";
import { composeSendMail, pausedForCreditsMail, type MailLinkSigner, type SendMail } from "./mail.js";
import { selectSend, type SendSelection } from "./selection.js";

/** What a send needs. */
export interface SendDeps {
  db: Db;
  storage: FileStorage;
  signer: MailLinkSigner;
  /** Most bytes attached to one e-mail (ATTACHMENT_LIMIT_BYTES; lower in tests). */
  attachmentLimitBytes: number;
}

/**
 * Who sends: a regular run (holding its claim) or a trigger (a job that commits its answer in the
 * send's transaction).
 */
export type SendMode =
  | { kind: "regular"; claim: Date }
  | { kind: "trigger"; jobId: string; commit: (trx: Trx, outcome: SendOutcome) => Promise<void> };

/** What a send did. */
export interface SendOutcome {
  sent: boolean;
  leadCount: number;
  creditsUsedTenths: number;
  recipients: number;
  message: string;
  /** The regular run paused the schedule (insufficient credits). */
  paused: boolean;
}

/** 409 `schedule_run_in_progress`. */
export function runInProgress(): ApiError {
  return new ApiError(
    409,
    "schedule_run_in_progress",
    "The schedule's regular run is sending it right now; nothing was sent. Try again in a few minutes.",
  );
}

/** Another send of the schedule committed first (or the balance was spent meanwhile): select again. */
class SendOvertaken extends Error {}

/**
 * A regular run that must not commit: its claim was taken over (it ran past its lease), or the
 * schedule was deleted or paused meanwhile. Nothing is sent.
 */
class RunAbandoned extends Error {}

/** Attempts of one send when another send of the schedule commits first. */
const SEND_ATTEMPTS = 3;

/** What the send reads before selecting: the preset's filters and the format. */
interface SendSetup {
  filters: SearchFilters;
  format: FileFormat;
  combined: CombinedSpec | null;
}

/** The preset's filters (undefined when the preset is gone or unusable) and the format. */
async function setupOf(db: Db, schedule: EmailSchedule): Promise<SendSetup | undefined> {
  const filters = await presetFiltersOf(db, schedule);
  if (!filters) return undefined;
  const saved = await resolveExportFormat(db, schedule.accountId, schedule.exportFormatId);
  const format = saved ? toFileFormat(saved) : defaultFileFormat();
  const combined = schedule.combinedFileEnabled
    ? {
        assigneeHeader: saved?.combinedAssigneeColumnName ?? DEFAULT_ASSIGNEE_HEADER,
        fileNameHeader: saved?.combinedFileNameColumnName ?? DEFAULT_FILE_NAME_HEADER,
        position: schedule.combinedColumnsPosition,
      }
    : null;
  return { filters, format, combined };
}

/**
 * Most leads one send of the schedule holds with this format: `maxLeadsPerEmail`, the format's
 * capacity, and for XLSX 20,000 when a file could hold every lead (no split, a `_total` file, or a
 * combined file).
 */
function capOf(schedule: EmailSchedule, setup: SendSetup): number {
  let cap = Math.min(sendCap(schedule), formatLeadCapacity(setup.format) ?? Infinity);
  const { format } = setup;
  if (format.fileType === "xlsx" && (!format.splitFiles || format.includeTotal || setup.combined)) {
    cap = Math.min(cap, XLSX_MAX_ROWS);
  }
  return cap;
}

/** Selects the send in one read-only snapshot; also answers the run's highest lead id. */
async function selectFor(
  db: Db,
  schedule: EmailSchedule,
  setup: SendSetup,
): Promise<{ selection: SendSelection; maxLeadId: number | null }> {
  const [account, blacklist] = await Promise.all([
    getAccountWithBalance(db, schedule.accountId),
    blacklistedDomains(db, schedule.accountId),
  ]);
  const balanceCap = spendable(account.balance).leads;
  const cap = capOf(schedule, setup);
  return db
    .transaction()
    .setAccessMode("read only")
    .execute(async (trx) => {
      await tuneSearch(trx);
      const maxLeadId = await findMaxLeadId(trx);
      if (maxLeadId === null) {
        return { selection: { leads: [], newLeads: 0, reservoir: [], capped: false }, maxLeadId };
      }
      const candidates = await findSendCandidates(trx, {
        accountId: schedule.accountId,
        scheduleId: schedule.id,
        filters: setup.filters,
        watermarkLeadId: schedule.watermarkLeadId,
        maxLeadId,
        limit: schedule.watermarkLeadId === null ? FIRST_RUN_CAP : cap + MAX_RESERVOIR_LEADS,
        withUrls: blacklist.size > 0,
      });
      const selection = selectSend(candidates, {
        sendCap: cap,
        balanceCap,
        reservoirCap: MAX_RESERVOIR_LEADS,
        blacklist,
      });
      return { selection, maxLeadId };
    });
}

/** The e-mails of a send: each address once, with every file it gets (its sets, the combined file). */
function mailsOf(
  schedule: EmailSchedule,
  files: SendFiles,
  entriesByKey: ReadonlyMap<string, ExportHistoryEntry>,
): SendMail[] {
  const byAddress = new Map<string, SendMail>();
  const add = (to: string, keys: string[]) => {
    const id = to.toLowerCase();
    const mail = byAddress.get(id) ?? { to, files: [] };
    byAddress.set(id, mail);
    for (const key of keys) {
      const entry = entriesByKey.get(key);
      if (entry && !mail.files.includes(entry)) mail.files.push(entry);
    }
  };
  for (const { set, written } of files.sets) {
    for (const to of set.to)
      add(
        to,
        written.files.map((f) => f.storageKey),
      );
  }
  if (files.combined) {
    const keys = files.combined.files.map((f) => f.storageKey);
    for (const to of schedule.combinedRecipients) add(to, keys);
  }
  return [...byAddress.values()].filter((m) => m.files.length > 0);
}

/**
 * Sends a schedule once: selects the leads new to it (reservoir first; the first run at most the
 * 10,000 newest), writes the files (no transaction open), then in ONE transaction locks the
 * schedule, checks no other send committed meanwhile (else selects again), records the leads in
 * the lead export history and charges the new ones (chargeDelivery, the sticky rule), records
 * the files in the export history, keeps the rest in the reservoir, moves the watermark (and for
 * a regular run the next due time, pausing on unpaid leads with a mail to the owner), queues the
 * e-mails (mail__send) and `email_schedule.sent`, and for a trigger commits its job answer. A
 * crash before the commit leaves nothing but files, which the retry removes; after it, nothing
 * is sent again.
 */
export async function sendSchedule(
  deps: SendDeps,
  accountId: number,
  scheduleId: number,
  mode: SendMode,
): Promise<SendOutcome | undefined> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await sendOnce(deps, accountId, scheduleId, mode);
    } catch (err) {
      if (err instanceof RunAbandoned) return undefined;
      if (!(err instanceof SendOvertaken) || attempt >= SEND_ATTEMPTS) {
        if (err instanceof SendOvertaken) throw runInProgress();
        throw err;
      }
    }
  }
}

async function sendOnce(
  deps: SendDeps,
  accountId: number,
  scheduleId: number,
  mode: SendMode,
): Promise<SendOutcome | undefined> {
  const { db, storage } = deps;
  const schedule = await findScheduleById(db, scheduleId);
  if (!schedule || schedule.accountId !== accountId) {
    if (mode.kind === "trigger") throw errors.notFound("E-mail schedule not found.");
    return undefined;
  }
  const setup = await setupOf(db, schedule);
  if (!setup) {
    if (mode.kind === "trigger") {
      throw errors.badRequest(
        "The schedule's filter preset no longer exists or holds no positive filter; choose another preset.",
      );
    }
    // A regular run without a usable preset skips this interval (the owner sees no send).
    await skipRun(db, schedule, mode.claim);
    return undefined;
  }
  const now = new Date();
  const { selection, maxLeadId } = await selectFor(db, schedule, setup);

  let files: SendFiles | null = null;
  const folder =
    mode.kind === "regular"
      ? `schedule-${schedule.id}-run-${schedule.nextRunAt?.getTime() ?? 0}`
      : `schedule-${schedule.id}-trigger-${mode.jobId}`;
  if (selection.leads.length > 0) {
    // An earlier attempt of this same send (a crashed worker) may have left its files here.
    await storage.deletePrefix(exportFolder(accountId, folder));
    const ids = selection.leads.map((l) => l.id);
    files = await writeSendFiles(db, storage, {
      accountId,
      exportId: folder,
      format: setup.format,
      sets: planFileSets(schedule, ids),
      combined: setup.combined,
      date: now,
    });
  }
  try {
    return await finish({
      deps,
      schedule,
      mode,
      selection,
      maxLeadId,
      files,
      formatName: setup.format.name,
      now,
    });
  } catch (err) {
    if (files) await storage.deletePrefix(exportFolder(accountId, folder));
    throw err;
  }
}

/**
 * The schedule when the send may still record itself on it; otherwise throws: a regular run whose
 * claim is gone or whose schedule was deleted or paused is abandoned; a trigger answers 404, 409
 * (a regular run is sending) or 400 (paused); another send that committed first means select again.
 */
function assertSendable(
  current: EmailSchedule | undefined,
  selectedFrom: EmailSchedule,
  mode: SendMode,
  now: Date,
): EmailSchedule {
  if (mode.kind === "regular") {
    const stillOurs = current?.isActive && current.runClaimedAt?.getTime() === mode.claim.getTime();
    if (!current || !stillOurs) throw new RunAbandoned();
  }
  if (!current) throw errors.notFound("E-mail schedule not found.");
  if (mode.kind === "trigger") {
    if (regularRunInProgress(current, now)) throw runInProgress();
    if (!current.isActive) throw errors.badRequest("The schedule is paused; resume it before sending it.");
  }
  if (current.watermarkLeadId !== selectedFrom.watermarkLeadId) throw new SendOvertaken();
  return current;
}

/** What the send's transaction commits. */
interface Finish {
  deps: SendDeps;
  /** The schedule as the selection read it. */
  schedule: EmailSchedule;
  mode: SendMode;
  selection: SendSelection;
  maxLeadId: number | null;
  /** The written files (null when nothing is sent). */
  files: SendFiles | null;
  formatName: string | null;
  now: Date;
}

/** Moves a regular run that cannot search on by one interval, if its claim still holds. */
async function skipRun(db: Db, schedule: EmailSchedule, claim: Date): Promise<void> {
  await recordSend(
    db,
    schedule.id,
    { watermarkLeadId: schedule.watermarkLeadId, claim },
    {
      sentAt: null,
      sentCount: 0,
      watermarkLeadId: schedule.watermarkLeadId,
      nextRunAt: nextRunAfter(schedule, new Date()),
      releaseClaim: true,
    },
  );
}

/** The send's one transaction (see sendSchedule). */
async function finish(input: Finish): Promise<SendOutcome> {
  const { deps, schedule, mode, selection, maxLeadId, files, now } = input;
  return deps.db.transaction().execute(async (trx) => {
    // Read without a lock: the schedule row is locked only by recordSend below, after the credit
    // lock, in the order a database switch takes them (account, then schedules).
    const current = assertSendable(
      await findSchedule(trx, schedule.accountId, schedule.id),
      schedule,
      mode,
      now,
    );

    const leadIds = selection.leads.map((l) => l.id);
    let charged: DeliveryCharged = { tenths: 0, remainingTenths: 0 };
    const entries: ExportHistoryEntry[] = [];
    if (files && leadIds.length > 0) {
      charged = await chargeOrReselect(trx, {
        accountId: schedule.accountId,
        reason: "email_schedule",
        reference: mode.kind === "trigger" ? mode.jobId : `schedule-${schedule.id}`,
        entryWait: "unbounded",
        deliver: async (trx) => ({
          lead: await recordDeliveredLeads(trx, {
            accountId: schedule.accountId,
            method: "email_schedule",
            exportedAt: now,
            leadIds,
          }),
        }),
      });
      for (const written of allFiles(files)) {
        entries.push(
          ...(await recordExportFiles(trx, {
            accountId: schedule.accountId,
            written,
            formatName: input.formatName,
            method: "email_schedule",
            createdAt: now,
          })),
        );
      }
    }
    const pause = mode.kind === "regular" && selection.capped;
    const recorded = await recordSend(
      trx,
      schedule.id,
      {
        watermarkLeadId: schedule.watermarkLeadId,
        ...(mode.kind === "regular"
          ? { claim: mode.claim }
          : { claimsLiveAfter: new Date(now.getTime() - RUN_LEASE_MS) }),
      },
      {
        sentAt: leadIds.length > 0 ? now : null,
        sentCount: leadIds.length,
        watermarkLeadId: maxLeadId ?? current.watermarkLeadId,
        ...(mode.kind === "regular"
          ? {
              nextRunAt: pause ? null : nextRunAfter(current, now),
              pauseReason: pause ? "insufficient_credits" : undefined,
              releaseClaim: true,
            }
          : {}),
      },
    );
    if (!recorded) {
      // Changed meanwhile: say why (the error rolls everything above back).
      assertSendable(await findSchedule(trx, schedule.accountId, schedule.id), schedule, mode, now);
      throw new SendOvertaken();
    }
    await replaceReservoir(trx, schedule.id, selection.reservoir);

    let recipients = 0;
    if (files && leadIds.length > 0) {
      const byKey = new Map(entries.map((e) => [e.storageKey, e]));
      const mails = mailsOf(current, files, byKey);
      recipients = mails.length;
      for (const mail of mails) {
        await enqueueMail(
          trx,
          await composeSendMail(mail, {
            scheduleName: current.name,
            leadCount: leadIds.length,
            attachmentLimitBytes: deps.attachmentLimitBytes,
            signer: deps.signer,
            now,
            storage: deps.storage,
          }),
        );
      }
      await emitEvent(trx, {
        accountId: schedule.accountId,
        type: "email_schedule.sent",
        data: {
          scheduleId: schedule.id,
          scheduleName: current.name,
          recipientCount: recipients,
          leadCount: leadIds.length,
          creditsUsed: charged.tenths / 10,
          sentAt: now.toISOString(),
        },
      });
    }
    if (pause) {
      const owner = await findAccount(trx, schedule.accountId);
      if (owner) {
        const waiting = selection.reservoir.length;
        await enqueueMail(trx, pausedForCreditsMail(owner.email, current.name, waiting));
      }
    }
    const outcome: SendOutcome = {
      sent: leadIds.length > 0,
      leadCount: leadIds.length,
      creditsUsedTenths: charged.tenths,
      recipients,
      message: messageOf(leadIds.length, recipients, selection),
      paused: pause,
    };
    if (mode.kind === "trigger") await mode.commit(trx, outcome);
    return outcome;
  });
}

/**
 * chargeDelivery; a 402 (a concurrent charge spent the balance after the selection) makes the send
 * select again with the balance left, so a schedule never answers 402.
 */
async function chargeOrReselect(trx: Trx, charge: Parameters<typeof chargeDelivery>[1]) {
  try {
    return await chargeDelivery(trx, charge);
  } catch (err) {
    if (err instanceof ApiError && err.status === 402) throw new SendOvertaken();
    throw err;
  }
}

/**
 * The preset's search filters, or undefined when the preset is gone or holds no usable search (a
 * hash preset is translated with the account's keyword lists as they are now: presetSearchFilters).
 */
export async function presetFiltersOf(
  db: Db,
  schedule: Pick<EmailSchedule, "accountId" | "filterPresetId">,
): Promise<SearchFilters | undefined> {
  const raw = await findPresetFilters(db, schedule.accountId, schedule.filterPresetId);
  if (!raw) return undefined;
  return presetSearchFilters(db, schedule.accountId, raw);
}

/** The outcome for people. */
function messageOf(leads: number, recipients: number, selection: SendSelection): string {
  if (leads > 0) {
    const waiting =
      selection.reservoir.length > 0 ? ` ${selection.reservoir.length} lead(s) wait for the next send.` : "";
    return `Sent ${leads} lead(s) to ${recipients} address(es).${waiting}`;
  }
  if (selection.capped) return "Nothing was sent: the balance cannot pay for any new lead.";
  return "Nothing was sent: no new lead matches the schedule's filter preset.";
}
