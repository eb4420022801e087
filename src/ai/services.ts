import type { AiModelConfig } from "../config.js";
import type { Db } from "../db/database.js";
import type { Outbound } from "../outbound/index.js";
import { ChatCompletionsModel, type ChatModelOptions } from "./chat-model.js";
import { AiEngine } from "./engine.js";

/** What the AI helpers' background work needs of a worker process. */
export interface AiServices {
  engine: AiEngine;
  /** Reads a business's website (the outbound guard's page fetcher). */
  outbound: Outbound;
}

declare module "../jobs/kinds.js" {
  interface JobServices {
    /** The AI helpers (the `ai_suggest_categories` job). */
    ai?: AiServices;
  }
}

/** The engine of a deployment: over the configured chat model, or the built-in back end. */
export function createAiEngine(
  db: Db,
  model: AiModelConfig | undefined,
  options?: ChatModelOptions,
): AiEngine {
  return new AiEngine(db, model ? new ChatCompletionsModel(model, options) : null);
}
