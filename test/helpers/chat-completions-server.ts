import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the server received. */
export interface ChatCall {
  path: string;
  headers: IncomingMessage["headers"];
  body: {
    model: string;
    messages: { role: string; content: string }[];
    response_format?: { type: string; json_schema?: { name: string; schema: unknown; strict?: boolean } };
    max_tokens?: number;
    [key: string]: unknown;
  };
}

/** How the server answers one call. */
export type ChatReply =
  /** A completion whose message content is this value as JSON. */
  | { json: unknown }
  /** A completion whose message content is this text as it is (for example not JSON). */
  | { text: string }
  /** An error status with an OpenAI-style error body (and Retry-After when given). */
  | { status: number; retryAfterSeconds?: number }
  /** No answer until the connection is closed (a timeout for the client). */
  | { hang: true };

/**
 * A real local HTTP server speaking the OpenAI Chat Completions API (`POST /v1/chat/completions`),
 * for the model back end's tests: it answers from a queue of scripted replies, then from
 * `respond` (computed from the request, by default an empty JSON object), and records every call.
 */
export class ChatCompletionsServer {
  readonly calls: ChatCall[] = [];
  private readonly queue: ChatReply[] = [];
  private server: Server | undefined;
  private readonly hanging = new Set<ServerResponse>();
  /** The reply when the queue is empty. */
  respond: (call: ChatCall) => ChatReply = () => ({ json: {} });

  /** Base URL for `AI_BASE_URL` (`http://127.0.0.1:port/v1`). */
  get baseUrl(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error("the chat completions server is not started");
    return `http://127.0.0.1:${address.port}/v1`;
  }

  /** Queues replies for the next calls, in order. */
  reply(...replies: ChatReply[]): void {
    this.queue.push(...replies);
  }

  /** Forgets calls and queued replies, and answers `{}` again by default. */
  reset(): void {
    this.calls.length = 0;
    this.queue.length = 0;
    this.respond = () => ({ json: {} });
    this.releaseHanging();
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    return this;
  }

  async stop(): Promise<void> {
    this.releaseHanging();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private releaseHanging(): void {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "not found", type: "invalid_request_error" } }));
      return;
    }
    const call: ChatCall = {
      path: req.url,
      headers: req.headers,
      body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatCall["body"],
    };
    this.calls.push(call);
    const reply = this.queue.shift() ?? this.respond(call);
    if ("hang" in reply) {
      this.hanging.add(res);
      res.on("close", () => this.hanging.delete(res));
      return;
    }
    if ("status" in reply) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (reply.retryAfterSeconds !== undefined) headers["retry-after"] = String(reply.retryAfterSeconds);
      res.writeHead(reply.status, headers);
      res.end(JSON.stringify({ error: { message: `status ${reply.status}`, type: "server_error" } }));
      return;
    }
    const content = "json" in reply ? JSON.stringify(reply.json) : reply.text;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: `chatcmpl-${this.calls.length}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: call.body.model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      }),
    );
  }
}

/** The JSON input (user message) of a call. */
export function userInput(call: ChatCall): unknown {
  const message = call.body.messages.find((m) => m.role === "user");
  return message ? (JSON.parse(message.content) as unknown) : undefined;
}
