import type { CrmConfig } from "../config.js";
import { run, type Runner } from "graphile-worker";
import type { Logger } from "pino";
import type pg from "pg";
import type { Db } from "../db/database.js";
import {
  EXPORT_FILES_CLEANUP_CRONTAB,
  exportFilesCleanup,
} from "../export-history/tasks/export_files__cleanup.js";
// Registers the api_leads_export job kind, so this worker runs exports.
import "../exports/job/kind.js";
// Registers the email_schedule_trigger job kind.
import "../email-schedules/trigger/kind.js";
import { ATTACHMENT_LIMIT_BYTES } from "../email-schedules/run/mail.js";
import { EMAIL_SCHEDULES_CRONTAB, RUN_DUE_TASK, runDueTask } from "../email-schedules/run/runner.js";
// Registers the ai_suggest_categories job kind.
import "../ai/suggest-job.js";
// Registers the three lead export history job kinds (refresh, re-export, refresh-and-export).
import "../lead-export-history/jobs.js";
import type { AiEngine } from "../ai/engine.js";
import { AI_CRONTAB, aiTaskList } from "../ai/tasks.js";
import type { PaymentProcessor } from "../billing/processor.js";
import {
  COLLECT_OVERAGE_CRONTAB,
  COLLECT_OVERAGE_TASK,
  billingCollectOverage,
} from "../billing/tasks/billing__collect_overage.js";
import { AUTO_TOP_UP_TASK, billingAutoTopUp } from "../billing/tasks/billing__auto_top_up.js";
import { JOBS_CRONTAB, jobTaskList } from "../jobs/index.js";
import { workerLogger } from "../jobs/runtime.js";
import type { Mailer } from "../mail/mailer.js";
import { MAIL_TASK } from "../mail/queue.js";
import { mailSendTask } from "../mail/task.js";
import { rateLimitsCleanup } from "../rate-limit/tasks/rate_limits__cleanup.js";
import {
  LIVE_UPDATES_CRONTAB,
  LIVE_UPDATES_SWEEP_TASK,
  liveUpdatesSweepTask,
} from "../leads/import/live-updates-task.js";
import type { FileStorage } from "../storage/file-storage.js";
import {
  DELIVER_SWEEP_CRONTAB,
  OUTBOX_SWEEP_CRONTAB,
  deliveryTaskList,
} from "../integrations/deliveries/tasks.js";
import { CRM_REFRESH_CRONTAB, crmTaskList } from "../integrations/crm/tasks.js";
import { OWNER_SUMMARY_TASK } from "../integrations/owner-notices.js";
import { integrationsOwnerSummary } from "../integrations/tasks/integrations__owner_summary.js";
import type { Outbound } from "../outbound/index.js";
import { ENRICHMENTS_CRONTAB, enrichmentTaskList } from "../enrichments/worker/task.js";
import {
  DASHBOARD_CLEANUP_CRONTAB,
  DASHBOARD_CLEANUP_TASK,
  dashboardCleanup,
} from "../auth/sessions/cleanup.js";
import { replaceExitedWorkers, waitingForDatabase } from "./database-outages.js";

const CRONTAB =
  "*/10 * * * * rate_limits__cleanup\n" +
  JOBS_CRONTAB +
  EXPORT_FILES_CLEANUP_CRONTAB +
  AI_CRONTAB +
  EMAIL_SCHEDULES_CRONTAB +
  COLLECT_OVERAGE_CRONTAB +
  LIVE_UPDATES_CRONTAB +
  DASHBOARD_CLEANUP_CRONTAB;

/** What tasks that touch the service's data need (job kinds run on these). */
export interface WorkerDeps {
  db: Db;
  storage: FileStorage;
  /** The deployment's signing secret (jobs that answer with signed links). */
  signingSecret: string;
  /** Sends the mails queued with enqueueMail. */
  mailer: Mailer;
  /** Every outbound request to a customer-supplied URL (webhook deliveries). */
  outbound: Outbound;
  /** The AI helpers' engine (category suggestions, keyword generation, lead classification). */
  aiEngine: AiEngine;
  /** `PUBLIC_BASE_URL`: base of the download links in e-mail schedules' mails. */
  publicBaseUrl?: string;
  /** The CRMs of this deployment (CRM deliveries and token refreshes). */
  crm?: CrmConfig;
  /** The payment processor (daily overage collection, auto top-up purchases); absent when payments are not configured. */
  payments?: PaymentProcessor;
  /** `DELIVERY_RETRY_DELAYS_MS`: the automatic deliveries' retry schedule; absent: the production one. */
  deliveryRetryDelaysMs?: readonly number[];
}

/** The worker's runners, stopped together. */
export interface Worker {
  stop(): Promise<void>;
}

/**
 * Delivery claimers per process (jobs of the delivery runner at once): each claims due
 * deliveries in batches and has `SEND_CONCURRENCY` attempts on the wire, which mostly wait on
 * receivers (up to 8 s each); they run beside the jobs that use CPU and memory (exports).
 */
export const DELIVERY_CONCURRENCY = 4;

/**
 * Enrichment runs processed at once per process: each slice of a run works up to 30 s (live
 * fetching keeps 64 sites in flight), so runs have a runner of their own beside the jobs.
 */
export const ENRICHMENT_CONCURRENCY = 2;

/**
 * Starts graphile-worker on the shared pool (its schema is migrated on start) with every task of
 * the service, by identifier (`area__action`, each defined in its area): one runner for the
 * jobs, one for event dispatch and webhook deliveries (a runner only takes the tasks it knows).
 */
export async function startWorker(
  pool: pg.Pool,
  logger: Logger,
  deps: WorkerDeps,
  concurrency = 4,
): Promise<Worker> {
  // The queue waits out a database outage instead of stopping (docs/reliability.md).
  const queuePool = waitingForDatabase(pool, logger);
  const preset = { plugins: [replaceExitedWorkers(logger)] };
  const jobs = await startJobsRunner(queuePool, logger, deps, concurrency, preset);
  const deliveries = await run({
    preset,
    pgPool: queuePool,
    concurrency: DELIVERY_CONCURRENCY,
    noHandleSignals: true,
    pollInterval: 2_000,
    taskList: {
      ...deliveryTaskList({
        db: deps.db,
        outbound: deps.outbound,
        logger,
        ...(deps.crm ? { crm: { crm: deps.crm, publicBaseUrl: deps.publicBaseUrl ?? "" } } : {}),
        ...(deps.deliveryRetryDelaysMs ? { retryDelaysMs: deps.deliveryRetryDelaysMs } : {}),
      }),
      ...(deps.crm
        ? crmTaskList({
            db: deps.db,
            outbound: deps.outbound,
            config: { crm: deps.crm, publicBaseUrl: deps.publicBaseUrl ?? "" },
          })
        : {}),
    },
    crontab: DELIVER_SWEEP_CRONTAB + OUTBOX_SWEEP_CRONTAB + (deps.crm ? CRM_REFRESH_CRONTAB : ""),
    logger: workerLogger(logger),
  });
  logger.info({ concurrency: DELIVERY_CONCURRENCY }, "delivery worker started");
  const enrichments = await run({
    preset,
    pgPool: queuePool,
    concurrency: ENRICHMENT_CONCURRENCY,
    noHandleSignals: true,
    pollInterval: 2_000,
    taskList: enrichmentTaskList({ ...deps, publicBaseUrl: deps.publicBaseUrl ?? "", logger }),
    crontab: ENRICHMENTS_CRONTAB,
    logger: workerLogger(logger),
  });
  return {
    async stop() {
      await Promise.all([jobs.stop(), deliveries.stop(), enrichments.stop()]);
    },
  };
}

async function startJobsRunner(
  pool: pg.Pool,
  logger: Logger,
  deps: WorkerDeps,
  concurrency: number,
  preset: GraphileConfig.Preset,
): Promise<Runner> {
  const runner = await run({
    preset,
    pgPool: pool,
    concurrency,
    noHandleSignals: true,
    pollInterval: 2_000,
    taskList: {
      rate_limits__cleanup: rateLimitsCleanup,
      ...jobTaskList({
        ...deps,
        logger,
        services: { ai: { engine: deps.aiEngine, outbound: deps.outbound } },
      }),
      ...aiTaskList({ db: deps.db, engine: deps.aiEngine, logger }),
      export_files__cleanup: exportFilesCleanup(deps),
      [DASHBOARD_CLEANUP_TASK]: dashboardCleanup(deps),
      [COLLECT_OVERAGE_TASK]: billingCollectOverage({ db: deps.db, processor: deps.payments, logger }),
      [AUTO_TOP_UP_TASK]: billingAutoTopUp({ db: deps.db, processor: deps.payments, logger }),
      [MAIL_TASK]: mailSendTask(deps.mailer, deps.storage),
      [LIVE_UPDATES_SWEEP_TASK]: liveUpdatesSweepTask(deps.db),
      [OWNER_SUMMARY_TASK]: integrationsOwnerSummary(deps),
      [RUN_DUE_TASK]: runDueTask({
        db: deps.db,
        storage: deps.storage,
        signer: { signingSecret: deps.signingSecret, publicBaseUrl: deps.publicBaseUrl ?? "" },
        attachmentLimitBytes: ATTACHMENT_LIMIT_BYTES,
        logger,
      }),
    },
    crontab: CRONTAB,
    logger: workerLogger(logger),
  });
  logger.info({ concurrency }, "worker started");
  return runner;
}
