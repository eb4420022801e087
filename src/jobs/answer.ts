import type {
  AnswerHeaders,
  FileStatus,
  JsonBody,
  JsonStatus,
  MediaTypeOf,
  OperationId,
} from "../http/contract.js";
import { ApiError } from "../http/errors.js";

/** A file kept in storage (src/storage) as the body of a job's answer. */
export interface AnswerFile {
  /** Key in FileStorage. */
  storageKey: string;
  contentType: string;
  /** Name sent in `Content-Disposition`, for example `leads-main-2026-11-22.csv`. */
  fileName: string;
  /**
   * True when the file belongs to another record (for example an export-history entry): the job
   * never deletes it. False (default): the file is deleted when the job's answer expires.
   */
  shared?: boolean;
}

/**
 * A JSON body kept in storage as its serialised text, instead of in the jobs table: answers of
 * at least LARGE_BODY_BYTES (src/jobs/large-bodies.ts). Deleted when the answer expires.
 */
export interface AnswerBodyFile {
  storageKey: string;
}

/** A file in storage whose text is a string value of a composed JSON body (see AnswerComposedBody). */
export interface AnswerStoredText {
  storageKey: string;
  /** Bytes of the file. */
  size: number;
  /** Its UTF-8 text (`text`) or its bytes in base64 (`base64`). */
  encoding: "text" | "base64";
}

/**
 * A large JSON body made of stored files (an export's JSON answer with its files inline): the
 * serialised text around them (`segments`, one more than `texts`) is kept in the jobs table, and
 * each file's text is written between two segments as a JSON string when the answer is served
 * (src/jobs/large-bodies.ts). The files belong to other records (export history): the answer
 * never deletes them, and once one is gone the answer is expired.
 */
export interface AnswerComposedBody {
  segments: string[];
  texts: AnswerStoredText[];
}

/** The final HTTP answer of a job, stored as it is and returned to every later poll or replay. */
export type JobAnswer =
  | { status: number; headers?: Record<string, string | number | undefined>; body: unknown }
  | { status: number; headers?: Record<string, string | number | undefined>; file: AnswerFile }
  | { status: number; headers?: Record<string, string | number | undefined>; bodyFile: AnswerBodyFile }
  | {
      status: number;
      headers?: Record<string, string | number | undefined>;
      composedBody: AnswerComposedBody;
    };

/**
 * An answer of operation `O` as its job kind builds it: a declared status with its JSON body, or
 * (where the contract declares a file) a file in storage of a declared media type, and only
 * headers the contract declares for that status. What a kind stores is typed here, at its source.
 */
export type JobAnswerOf<O extends OperationId> =
  | {
      [S in JsonStatus<O>]: { status: S; headers?: AnswerHeaders<O, S>; body: JsonBody<O, S> };
    }[JsonStatus<O>]
  | {
      [S in FileStatus<O>]: {
        status: S;
        headers?: AnswerHeaders<O, S>;
        file: AnswerFile & { contentType: MediaTypeOf<O, S> };
      };
    }[FileStatus<O>];

/** The `{error, message, details?}` answer of an ApiError (ApiError.body), with its headers. */
export function errorAnswer(err: ApiError): JobAnswer {
  return { status: err.status, headers: { ...err.headers }, body: err.body() };
}

/** 500 `job_timeout`: the stored answer of a job past its time limit. */
export function timeoutAnswer(): JobAnswer {
  return errorAnswer(
    new ApiError(500, "job_timeout", "The request ran past its time limit and was stopped. Try again."),
  );
}

/** 500 `internal_error`, for a job that failed in an unexpected way. */
export function internalErrorAnswer(): JobAnswer {
  return errorAnswer(new ApiError(500, "internal_error", "An unexpected error occurred."));
}

/** Headers that describe the current request, never stored with an answer. */
const NOT_STORED =
  /^(x-ratelimit-|ratelimit(-policy)?$|x-request-id$|x-svc-job-|cache-control$|preference-applied$|content-length$)/i;

/** Checks and normalises an answer returned by a job kind before it is stored. */
export function normaliseAnswer(answer: JobAnswer): JobAnswer {
  if (!Number.isInteger(answer.status) || answer.status < 200 || answer.status > 599) {
    throw new Error(`invalid job answer status ${answer.status}`);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers ?? {})) {
    if (value !== undefined && !NOT_STORED.test(name)) headers[name] = String(value);
  }
  if ("file" in answer) {
    return { status: answer.status, headers, file: { ...answer.file, shared: answer.file.shared ?? false } };
  }
  if ("bodyFile" in answer) return { status: answer.status, headers, bodyFile: answer.bodyFile };
  if ("composedBody" in answer) return { status: answer.status, headers, composedBody: answer.composedBody };
  return { status: answer.status, headers, body: answer.body };
}

/** Reads a stored answer back (the `answer` column); undefined when it is not a valid answer. */
export function parseStoredAnswer(value: unknown): JobAnswer | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const answer = value as { status?: unknown; headers?: unknown; file?: unknown };
  if (typeof answer.status !== "number") return undefined;
  return value as JobAnswer;
}
