import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { SMTPServer } from "smtp-server";
import { createAccountWithKey } from "../../src/accounts/service.js";
import { createDatabase, migrateToLatest, type Db } from "../../src/db/database.js";
import { createEmailSchedule } from "../../src/email-schedules/service.js";
import { insertPreset } from "../../src/filter-presets/repository.js";
import { ownDatabase, startService, stopProcess } from "./lib.js";

/** Schedules (and exports) of the run, and leads each one sends. */
const SCHEDULES = Number(process.env.BENCH_SCHEDULES ?? 100);
const LEADS_EACH = Number(process.env.BENCH_SCHEDULE_LEADS ?? 1_000);

/** Resident memory of a process in MB (`VmRSS`), or undefined once it is gone. */
function rssMb(pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
  } catch {
    return undefined;
  }
}

/** Samples a process's resident memory every 20 ms while `work` runs; the work's result, seconds and peak MB. */
async function measured<T>(
  pid: number,
  work: () => Promise<T>,
): Promise<{ result: T; seconds: number; peakRssMb: number }> {
  let peak = rssMb(pid) ?? 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMb(pid) ?? 0);
  }, 20);
  const started = performance.now();
  try {
    const result = await work();
    return { result, seconds: Number(((performance.now() - started) / 1000).toFixed(2)), peakRssMb: peak };
  } finally {
    clearInterval(timer);
  }
}

/** A word per group of leads: letters only, so no word is part of another (`bgaab` is not in `bgaac`). */
function groupWord(k: number): string {
  let word = "";
  for (let n = k, i = 0; i < 3; i += 1, n = Math.floor(n / 26))
    word = String.fromCharCode(97 + (n % 26)) + word;
  return `schedbench${word}`;
}

/** `count` groups of LEADS_EACH plausible leads, each group named after its word (one statement). */
async function insertGroups(db: Db, words: string[]): Promise<void> {
  await sql`
    insert into leads (external_id, company_name, registered_url, email, phone, street, city, state, zip,
      country, category, description, stars, review_count, last_buying_signal, last_updated)
    select w.word || '-' || i, initcap(w.word) || ' Plumbing ' || i, 'https://' || w.word || '-' || i || '.example.org',
      'info' || i || '@' || w.word || '.example.org', '(512) 555-' || lpad((i % 10000)::text, 4, '0'),
      i || ' Main St', 'Austin', 'TX', '78701', 'US', 'Plumbing',
      'A local plumbing business serving homes and offices in the area.', 4.5, 10 + i % 90,
      now() - i * interval '1 minute', now() - i * interval '1 minute'
    from unnest(cast(${words} as text[])) as w(word), generate_series(1, ${LEADS_EACH}) as i`.execute(db);
}

/** A local SMTP server that counts the messages and bytes it accepts. */
async function startSmtp(): Promise<{
  url: string;
  received(): { messages: number; bytes: number };
  close(): Promise<void>;
}> {
  let messages = 0;
  let bytes = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    size: 100 * 1024 * 1024,
    onData(stream, _session, callback) {
      stream.on("data", (chunk: Buffer) => (bytes += chunk.length));
      stream.on("end", () => {
        messages += 1;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received: () => ({ messages, bytes }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Polls until `done()` holds (every 20 ms), or throws after `timeoutMs`. */
async function until(done: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One export per key through POST /leads/export (respond-async, polled), all at once; bytes downloaded. */
async function exportAll(base: string, jobs: { apiKey: string; word: string }[]): Promise<number> {
  let bytes = 0;
  await Promise.all(
    jobs.map(async ({ apiKey, word }) => {
      const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
      let res = await fetch(`${base}/api/v1/leads/export`, {
        method: "POST",
        headers: { ...headers, prefer: "respond-async" },
        body: JSON.stringify({ positiveKeywords: [word] }),
      });
      if (res.status === 202) {
        const { statusUrl } = (await res.json()) as { statusUrl: string };
        for (;;) {
          res = await fetch(`${base}${statusUrl}`, { headers: { ...headers, prefer: "wait=60" } });
          if (res.status !== 202) break;
          await res.arrayBuffer();
        }
      }
      if (res.status !== 200) throw new Error(`export answered ${res.status}: ${await res.text()}`);
      for await (const chunk of res.body ?? []) bytes += (chunk as Uint8Array).byteLength;
    }),
  );
  return bytes;
}

/** Makes the schedules due and asks the service's worker to run them now (the cron task, queued). */
async function runSchedulesNow(db: Db, ids: number[]): Promise<void> {
  await db
    .updateTable("email_schedules")
    .set({ next_run_at: new Date(Date.now() - 1000) })
    .where("id", "in", ids)
    .execute();
  await sql`select graphile_worker.add_job('email_schedules__run_due', '{}'::json)`.execute(db);
}

/**
 * One run of 100 due schedules of 1,000 new leads each (CSV, one recipient each), sent to a local
 * SMTP server by the service (a child process, API and worker in one): seconds from queueing the
 * runner task until the last mail is received, against the same 100 exports (the same leads,
 * other accounts) through POST /leads/export, all requested at once and polled until every file
 * is downloaded, in the same run; the service's peak resident memory in each. Goal: schedules
 * within 1.5x of the exports, memory under 400 MB.
 */
export async function benchSchedules(databaseUrl: string): Promise<Record<string, unknown>> {
  const target = await ownDatabase(databaseUrl, "schedules");
  const dir = mkdtempSync(join(tmpdir(), "lead-bench-schedules-"));
  const { db } = createDatabase(target.url, 4);
  const smtp = await startSmtp();
  try {
    await migrateToLatest(db);
    // Group 0 warms up (not timed); groups 1..SCHEDULES are measured.
    const words = Array.from({ length: SCHEDULES + 1 }, (_, k) => groupWord(k));
    await insertGroups(db, words);
    const account = async (label: string) =>
      createAccountWithKey(db, { email: `bench-${label}-${Date.now()}@example.com`, plan: "enterprise" });
    const schedules: { id: number; word: string }[] = [];
    const exporters: { apiKey: string; word: string }[] = [];
    for (const [k, word] of words.entries()) {
      // Separate accounts, so every schedule and every export pays for its leads.
      const owner = await account(`schedule-${k}`);
      const preset = await insertPreset(db, owner.accountId, word, { positiveKeywords: [word] });
      const schedule = await createEmailSchedule(db, owner.accountId, {
        name: `Bench ${k}`,
        filterPresetId: preset.id,
        intervalValue: 1,
        recipients: [{ email: `rep-${k}@example.com`, splitParts: null }],
      });
      schedules.push({ id: schedule.id, word });
      exporters.push({ apiKey: (await account(`export-${k}`)).apiKey, word });
    }

    const { base, service } = await startService(target.url, dir, { SMTP_URL: smtp.url });
    const pid = service.pid ?? -1;
    try {
      // Warm-up: one export and one schedule run compile the code paths once.
      await exportAll(base, exporters.slice(0, 1));
      await runSchedulesNow(db, [schedules[0]!.id]);
      await until(() => smtp.received().messages >= 1, 60_000, "the warm-up mail");

      const exports = await measured(pid, () => exportAll(base, exporters.slice(1)));
      const sentBefore = smtp.received();
      const run = await measured(pid, async () => {
        await runSchedulesNow(
          db,
          schedules.slice(1).map((s) => s.id),
        );
        await until(() => smtp.received().messages >= sentBefore.messages + SCHEDULES, 600_000, "the mails");
      });
      const sent = await db
        .selectFrom("email_schedules")
        .select((eb) => eb.fn.sum<number>("total_sent_count").as("leads"))
        .where(
          "id",
          "in",
          schedules.slice(1).map((s) => s.id),
        )
        .executeTakeFirstOrThrow();
      const received = smtp.received();
      return {
        schedules: SCHEDULES,
        leadsEach: LEADS_EACH,
        exports: { seconds: exports.seconds, peakRssMb: exports.peakRssMb, bytes: exports.result },
        schedulesRun: {
          seconds: run.seconds,
          peakRssMb: run.peakRssMb,
          leadsSent: Number(sent.leads),
          mails: received.messages - sentBefore.messages,
          mailBytes: received.bytes - sentBefore.bytes,
        },
        ratio: Number((run.seconds / exports.seconds).toFixed(2)),
        goal: "schedules within 1.5x of the same exports through POST /leads/export; service RSS < 400 MB",
      };
    } finally {
      await stopProcess(service);
    }
  } finally {
    await smtp.close();
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
    await target.drop();
  }
}
