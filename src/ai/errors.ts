/** Why the AI model gave no usable answer. */
export type AiFailure = "timeout" | "unreachable" | "error_status" | "invalid_output" | "aborted";

/**
 * The AI model failed (after its retries): a suggestion answers 503 `service_unavailable`, a
 * keyword generation ends `failed`, a classification batch is tried again later. The message is
 * safe to show a customer.
 */
export class AiUnavailableError extends Error {
  constructor(
    readonly failure: AiFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "AiUnavailableError";
  }
}
