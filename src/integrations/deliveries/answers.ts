import { sql } from "kysely";
import type { Logger } from "pino";
import { executePrepared, type Db, type DbOrTrx } from "../../db/database.js";

/**
 * How long a noted answer waits for others to share its write (ms). A claimer whose worker dies
 * sends again what was on the wire and the answers of at most this long (docs/events.md).
 */
export const ANSWER_NOTE_DELAY_MS = 5;
/** How long a claim waits for a write of its notes still under way before it records its attempts. */
const SETTLE_WAIT_MS = 1_000;
/** Notes older than this are removed by the minute's delivery sweep (their claim has ended). */
const STALE_NOTE_SECONDS = 3_600;

/** A delivery's 2xx answer, noted before its claim records it. */
export interface NotedAnswer {
  id: number;
  /** The delivery's `attempt_count` when it was claimed. */
  attemptCount: number;
  statusCode: number | null;
  latencyMs: number;
  responseBody: string | null;
}

/** The notes of one claim: which were written (the claim deletes them when it records). */
export class ClaimNotes {
  readonly written: number[] = [];
  /** Writes under way that carry notes of this claim. */
  readonly writing = new Set<Promise<void>>();
  constructor(private readonly writer: AnswerWriter) {}

  note(answer: NotedAnswer): void {
    this.writer.note(this, answer);
  }

  /**
   * Ends the notes before the claim records its attempts: what is not written yet is dropped (the
   * record follows at once); writes under way are waited for, up to a second.
   */
  async settle(): Promise<void> {
    this.writer.drop(this);
    if (this.writing.size === 0) return;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.writing),
      new Promise<void>((r) => (timeout = setTimeout(r, SETTLE_WAIT_MS))),
    ]);
    clearTimeout(timeout);
  }
}

/**
 * Writes the successful answers of every claim of a process to `integration_delivery_answers`
 * as they arrive: one statement for all the answers of a few milliseconds, on a connection of its
 * own (a claim's rows stay locked by its transaction), one write at a time. A failed write is
 * logged and ignored: a note only spares a re-send; without it a delivery is sent again after a
 * crash, as before.
 */
export class AnswerWriter {
  private pending: { claim: ClaimNotes; answer: NotedAnswer }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  /** Statements written (the tests count them). */
  statements = 0;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  /** The notes of a new claim. */
  claim(): ClaimNotes {
    return new ClaimNotes(this);
  }

  note(claim: ClaimNotes, answer: NotedAnswer): void {
    this.pending.push({ claim, answer });
    this.schedule();
  }

  drop(claim: ClaimNotes): void {
    this.pending = this.pending.filter((p) => p.claim !== claim);
  }

  private schedule(): void {
    if (!this.timer && !this.busy && this.pending.length > 0) {
      this.timer = setTimeout(() => this.write(), ANSWER_NOTE_DELAY_MS);
    }
  }

  private write(): void {
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    this.busy = true;
    this.statements += 1;
    const claims = new Set(batch.map((p) => p.claim));
    const done: Promise<void> = noteAnswers(
      this.db,
      batch.map((p) => p.answer),
    )
      .then(
        () => {
          for (const p of batch) p.claim.written.push(p.answer.id);
        },
        (err: unknown) =>
          this.logger.warn({ err }, "delivery answers not noted (their claim records them at its end)"),
      )
      .finally(() => {
        for (const c of claims) c.writing.delete(done);
        this.busy = false;
        this.schedule();
      });
    for (const c of claims) c.writing.add(done);
  }
}

const writers = new WeakMap<Db, AnswerWriter>();

/** The process's writer of answer notes for a database (one for all its claimers). */
export function answerWriter(db: Db, logger: Logger): AnswerWriter {
  let writer = writers.get(db);
  if (!writer) {
    writer = new AnswerWriter(db, logger);
    writers.set(db, writer);
  }
  return writer;
}

/** Writes notes in one statement (a note of the same delivery is replaced). */
export async function noteAnswers(db: DbOrTrx, answers: readonly NotedAnswer[]): Promise<void> {
  const query = sql`
    insert into integration_delivery_answers (delivery_id, attempt_count, status_code, latency_ms, response_body)
    select * from unnest(${answers.map((a) => a.id)}::integer[], ${answers.map((a) => a.attemptCount)}::integer[],
      ${answers.map((a) => a.statusCode)}::integer[], ${answers.map((a) => a.latencyMs)}::integer[],
      ${answers.map((a) => a.responseBody)}::text[])
    on conflict (delivery_id) do update set
      attempt_count = excluded.attempt_count, status_code = excluded.status_code,
      latency_ms = excluded.latency_ms, response_body = excluded.response_body, noted_at = now()`;
  await executePrepared(db, query.compile(db));
}

/** Removes notes left by claims that ended long ago (a delivery deleted after its claim died). */
export async function forgetStaleAnswers(db: DbOrTrx): Promise<void> {
  await sql`delete from integration_delivery_answers
    where noted_at < now() - make_interval(secs => ${STALE_NOTE_SECONDS})`.execute(db);
}
