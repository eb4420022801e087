import OpenAI from "openai";
import type { AiModelConfig } from "../config.js";
import { AiUnavailableError } from "./errors.js";
import type { OutputShape } from "./output-shapes.js";

/** One structured request to the model: instructions, the input, and the shape of the answer. */
export interface ChatRequest<T> {
  /** The instructions (system message). */
  system: string;
  /** The input (user message), JSON or text. */
  user: string;
  /** The JSON schema the answer must follow, and the check of a parsed answer against it. */
  shape: OutputShape<T>;
  /** Ends the call (a job's time limit, a worker's shutdown). */
  signal?: AbortSignal;
}

/** What the engine asks of a chat model; the adapter below is the real one. */
export interface ChatModel {
  /** The model's name, for logs. */
  readonly name: string;
  /** The model's answer, parsed and checked against `shape`. @throws AiUnavailableError */
  complete<T>(request: ChatRequest<T>): Promise<T>;
}

/** Tuning of the adapter; the defaults suit a hosted model, tests shorten them. */
export interface ChatModelOptions {
  /** Retries of a call that got 408/409/429/5xx, a timeout or no connection (the client's backoff). */
  maxRetries?: number;
  /** Further calls after an answer that is not JSON of the schema. */
  invalidOutputRetries?: number;
}

/**
 * The AI model over the OpenAI-compatible Chat Completions API, through the official `openai`
 * package: hosted models and local servers (Ollama, vLLM) alike. Each call asks for structured
 * output (`response_format: json_schema`, strict), caps the answer at `maxTokens` and the call at
 * `timeoutMs`; the client retries 429 and 5xx answers, timeouts and connection failures with
 * exponential backoff (honouring `Retry-After`). An answer that is not JSON of the schema is asked
 * for again once. Whatever still fails is an `AiUnavailableError`; the API key is never logged.
 */
export class ChatCompletionsModel implements ChatModel {
  readonly name: string;
  private readonly client: OpenAI;
  private readonly maxTokens: number;
  private readonly invalidOutputRetries: number;

  constructor(config: AiModelConfig, options: ChatModelOptions = {}) {
    this.name = config.model;
    this.maxTokens = config.maxTokens;
    this.invalidOutputRetries = options.invalidOutputRetries ?? 1;
    this.client = new OpenAI({
      baseURL: config.baseUrl,
      // Local servers need no key; the client insists on one (and would read OPENAI_API_KEY).
      apiKey: config.apiKey ?? "unused",
      timeout: config.timeoutMs,
      maxRetries: options.maxRetries ?? 2,
      logLevel: "off",
    });
  }

  async complete<T>(request: ChatRequest<T>): Promise<T> {
    let lastProblem = "";
    for (let attempt = 0; attempt <= this.invalidOutputRetries; attempt += 1) {
      const content = await this.call(request);
      const parsed = parseJson(content);
      if (parsed === undefined) {
        lastProblem = "the answer is not JSON";
        continue;
      }
      const checked = request.shape.check(parsed);
      if (checked.ok) return checked.value;
      lastProblem = `the answer does not match the schema: ${checked.problem}`;
    }
    throw new AiUnavailableError("invalid_output", `The AI model gave no usable answer (${lastProblem}).`);
  }

  private async call<T>(request: ChatRequest<T>): Promise<string> {
    try {
      const completion = await this.client.chat.completions.create(
        {
          model: this.name,
          messages: [
            { role: "system", content: request.system },
            { role: "user", content: request.user },
          ],
          response_format: {
            type: "json_schema",
            json_schema: { name: request.shape.name, schema: request.shape.schema, strict: true },
          },
          max_tokens: this.maxTokens,
          temperature: 0.2,
        },
        { signal: request.signal },
      );
      return completion.choices[0]?.message?.content ?? "";
    } catch (err) {
      throw describeCallFailure(err);
    }
  }
}

function parseJson(content: string): unknown {
  // Some servers wrap JSON in a Markdown fence even when asked for a schema.
  const text = content
    .trim()
    .replace(/^```(?:json)?\s*/i, "")
    .replace(/\s*```$/, "");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The failure of a call after the client's retries, without anything secret in it. */
function describeCallFailure(err: unknown): AiUnavailableError {
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return new AiUnavailableError("timeout", "The AI model did not answer in time.", { cause: err });
  }
  if (err instanceof OpenAI.APIUserAbortError) {
    return new AiUnavailableError("aborted", "The AI model call was stopped.", { cause: err });
  }
  if (err instanceof OpenAI.APIConnectionError) {
    return new AiUnavailableError("unreachable", "The AI model could not be reached.", { cause: err });
  }
  if (err instanceof OpenAI.APIError) {
    return new AiUnavailableError("error_status", `The AI model answered HTTP ${err.status ?? "error"}.`, {
      cause: err,
    });
  }
  return new AiUnavailableError("unreachable", "The AI model call failed.", { cause: err });
}
