import { Writable } from "node:stream";
import { pino } from "pino";
import supertest from "supertest";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/app/create-app.js";
import { REDACTED_PATHS } from "../src/lib/logger.js";
import { useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";

const t = useTestApp();

function memoryLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const logger = pino({ level: "info", redact: { paths: REDACTED_PATHS, censor: "[redacted]" } }, stream);
  return { logger, lines };
}

describe("request logs", () => {
  it("carry a request id and never the API key", async () => {
    const { apiKey, auth } = await buildAccount(t.ctx.db);
    const { logger, lines } = memoryLogger();
    const app = createApp({ ...t.ctx, logger });
    const res = await supertest(app).get("/api/v1/me").set(auth).set("X-Request-Id", "req-abc.1").expect(200);
    expect(res.headers["x-request-id"]).toBe("req-abc.1");
    await supertest(app).get("/api/v1/me").set("Authorization", `Bearer ${apiKey}x`).expect(401);

    const text = lines.join("");
    expect(text).toContain('"id":"req-abc.1"');
    expect(text).toContain("/api/v1/me");
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain(apiKey.slice(5, 20));
    expect(text).toContain("[redacted]");
  });

  it("give every request an id when the client sends none (or an unusable one)", async () => {
    const { logger } = memoryLogger();
    const app = createApp({ ...t.ctx, logger });
    const a = await supertest(app).get("/api/v1/health").expect(200);
    const b = await supertest(app)
      .get("/api/v1/health")
      .set("X-Request-Id", "bad id with spaces")
      .expect(200);
    expect(a.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });
});
