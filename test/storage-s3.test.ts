import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Readable } from "node:stream";
import { pino } from "pino";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { ApiError } from "../src/http/errors.js";
import { REDACTED_PATHS } from "../src/lib/logger.js";
import { createFileStorage } from "../src/storage/from-config.js";
import { LocalDiskStorage } from "../src/storage/local-disk.js";
import { presignedLink } from "../src/storage/presigned-link.js";
import { S3Storage } from "../src/storage/s3.js";
import { startLocalS3, type LocalS3 } from "./helpers/s3-server.js";

let s3: LocalS3;
let storage: S3Storage;

beforeAll(async () => {
  s3 = await startLocalS3();
  storage = s3.storage();
});
afterAll(async () => {
  storage?.close();
  await s3?.destroy();
});

async function text(body: Readable | undefined): Promise<string> {
  if (!body) throw new Error("no body");
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString();
}

/** Rejects with the ApiError the call threw (fails when it resolves). */
async function apiErrorOf(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe("S3Storage against a local S3 server (signatures checked)", () => {
  it("puts a buffer and reads it back with get, open and size", async () => {
    expect(await storage.put("t/one/a.csv", Buffer.from("id,name\n1,Acme\n"))).toEqual({ size: 15 });
    expect(await text(await storage.get("t/one/a.csv"))).toBe("id,name\n1,Acme\n");
    const opened = await storage.open("t/one/a.csv");
    expect(opened?.size).toBe(15);
    expect(await text(opened?.body)).toBe("id,name\n1,Acme\n");
    expect(await storage.size("t/one/a.csv")).toBe(15);
  });

  it("streams a file larger than one upload part (multipart) and counts its bytes", async () => {
    const part = Buffer.alloc(3 * 1024 * 1024, "x");
    const chunks = Array.from({ length: 7 }, (_, i) => Buffer.concat([part, Buffer.from(`#${i}\n`)]));
    const expected = chunks.reduce((n, c) => n + c.length, 0);
    const { size } = await storage.put("t/big/leads.csv", Readable.from(chunks));
    expect(size).toBe(expected);
    expect(await storage.size("t/big/leads.csv")).toBe(expected);
    const read = await text(await storage.get("t/big/leads.csv"));
    expect(read.length).toBe(expected);
    expect(read.endsWith("#6\n")).toBe(true);
  });

  it("replaces a file written again under the same key", async () => {
    await storage.put("t/replace/a.txt", Buffer.from("first"));
    await storage.put("t/replace/a.txt", Readable.from([Buffer.from("second")]));
    expect(await text(await storage.get("t/replace/a.txt"))).toBe("second");
  });

  it("answers undefined for a missing file, and deleting one is no error", async () => {
    expect(await storage.get("t/none/x.csv")).toBeUndefined();
    expect(await storage.open("t/none/x.csv")).toBeUndefined();
    expect(await storage.size("t/none/x.csv")).toBeUndefined();
    await storage.delete("t/none/x.csv");
  });

  it("deletes one file, and every file under a folder but none beside it", async () => {
    await storage.put("t/del/a.csv", Buffer.from("a"));
    await storage.delete("t/del/a.csv");
    expect(await storage.size("t/del/a.csv")).toBeUndefined();

    for (let i = 0; i < 12; i += 1) await storage.put(`t/folder/x/${i}.csv`, Buffer.from(String(i)));
    await storage.put("t/folder/xy.csv", Buffer.from("beside"));
    await storage.put("t/folder/other/keep.csv", Buffer.from("keep"));
    await storage.deletePrefix("t/folder/x/");
    for (let i = 0; i < 12; i += 1) expect(await storage.size(`t/folder/x/${i}.csv`)).toBeUndefined();
    expect(await storage.size("t/folder/xy.csv")).toBe(6);
    expect(await storage.size("t/folder/other/keep.csv")).toBe(4);
    await expect(storage.deletePrefix("t/folder/x")).rejects.toThrow(/names a folder/);
  });

  it("fails a write whose source fails with the source's error and stores nothing", async () => {
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(1024, "a"));
        this.destroy(new Error("the rows could not be read"));
      },
    });
    await expect(storage.put("t/failed/a.csv", failing)).rejects.toThrow("the rows could not be read");
    expect(await storage.size("t/failed/a.csv")).toBeUndefined();
  });
});

describe("presigned links", () => {
  it("download without credentials and name the file; a tampered or unsigned link is refused", async () => {
    await storage.put("t/link/leads-main-2026-11-27.csv", Buffer.from("id\n1\n"));
    const now = new Date();
    const link = await presignedLink(
      storage,
      {
        storageKey: "t/link/leads-main-2026-11-27.csv",
        fileName: "leads-main-2026-11-27.csv",
        contentType: "text/csv",
      },
      new Date(now.getTime() + 15 * 60_000),
      now,
    );
    expect(link).toBeDefined();
    expect(link!.url.startsWith(`${s3.endpoint}/${s3.bucket}/t/link/`)).toBe(true);
    expect(new URL(link!.url).searchParams.get("X-Amz-Expires")).toBe("900");
    expect(link!.expiresAt.getTime()).toBe(Math.floor(now.getTime() / 1000) * 1000 + 900_000);
    const res = await fetch(link!.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="leads-main-2026-11-27.csv"');
    expect(res.headers.get("content-type")).toBe("text/csv");
    expect(await res.text()).toBe("id\n1\n");

    // Tampered with (another file, a longer life, another key), or without its signature: refused.
    const otherFile = new URL(link!.url);
    otherFile.pathname = otherFile.pathname.replace("leads-main-2026-11-27.csv", "other.csv");
    await storage.put("t/link/other.csv", Buffer.from("secret"));
    const longer = new URL(link!.url);
    longer.searchParams.set("X-Amz-Expires", "604800");
    const otherKey = new URL(link!.url);
    otherKey.searchParams.set(
      "X-Amz-Credential",
      otherKey.searchParams.get("X-Amz-Credential")!.replace("S3RVER", "OTHER"),
    );
    const unsigned = new URL(link!.url);
    unsigned.search = "";
    for (const url of [otherFile, longer, otherKey, unsigned]) {
      const refused = await fetch(url);
      expect(refused.status, url.toString()).toBe(403);
      expect(await refused.text()).not.toContain("secret");
    }
  });

  it("stop working after their lifetime (refused by the server itself)", async () => {
    await storage.put("t/link/short.csv", Buffer.from("id\n2\n"));
    const now = new Date();
    const link = await presignedLink(
      storage,
      { storageKey: "t/link/short.csv", fileName: "short.csv", contentType: "text/csv" },
      new Date(now.getTime() + 1_000),
      now,
    );
    expect(new URL(link!.url).searchParams.get("X-Amz-Expires")).toBe("1");
    await new Promise((r) => setTimeout(r, Math.max(0, link!.expiresAt.getTime() - Date.now()) + 1_100));
    const res = await fetch(link!.url);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Request has expired");
  });

  it("on AWS S3 are HTTPS links of an S3 host, as the real service's client requires", async () => {
    // The client's own check (smb_api.py, PRESIGNED_HOST_RE): HTTPS and an Amazon S3 host only.
    const s3Host = /^(?:[a-z0-9.-]+\.)?s3(?:[.-][a-z0-9-]+)*\.amazonaws\.com$/;
    for (const forcePathStyle of [false, true]) {
      const aws = new S3Storage({
        bucket: "lead-files",
        region: "eu-central-1",
        forcePathStyle,
        credentials: { accessKeyId: "AKIAEXAMPLE", secretAccessKey: "example" },
      });
      const url = new URL(
        await aws.presignedUrl("exports/1/x/leads.csv", {
          expiresInSeconds: 900,
          fileName: "leads.csv",
          contentType: "text/csv",
        }),
      );
      expect(url.protocol).toBe("https:");
      expect(url.hostname).toMatch(s3Host);
      expect(url.hostname).toBe(
        forcePathStyle ? "s3.eu-central-1.amazonaws.com" : "lead-files.s3.eu-central-1.amazonaws.com",
      );
      aws.close();
    }
  });

  it("are not made by local disk (the API's own signed links are used)", async () => {
    const disk = new LocalDiskStorage("/tmp/lead-test-unused");
    expect(
      await presignedLink(
        disk,
        { storageKey: "a", fileName: "a", contentType: "text/csv" },
        new Date(),
        new Date(),
      ),
    ).toBeUndefined();
  });
});

describe("a store that cannot be reached or refuses the service", () => {
  it("gives 503 service_unavailable with Retry-After 30 on every call, and no store error text", async () => {
    const closed = new S3Storage(s3.settings({ endpoint: "http://127.0.0.1:1" }));
    for (const call of [
      () => closed.size("a"),
      () => closed.open("a"),
      () => closed.get("a"),
      () => closed.put("a", Buffer.from("x")),
      () => closed.put("a", Readable.from([Buffer.from("x")])),
      () => closed.delete("a"),
      () => closed.deletePrefix("a/"),
    ]) {
      const err = await apiErrorOf(call());
      expect(err.status).toBe(503);
      expect(err.code).toBe("service_unavailable");
      expect(err.headers).toEqual({ "Retry-After": "30" });
      expect(err.message).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    }
    closed.close();
  });

  it("gives 503 for credentials the server refuses (a wrong secret, an unknown key)", async () => {
    for (const credentials of [
      { accessKeyId: "S3RVER", secretAccessKey: "wrong" },
      { accessKeyId: "OTHER", secretAccessKey: "S3RVER" },
    ]) {
      const wrong = new S3Storage(s3.settings({ credentials }));
      expect((await apiErrorOf(wrong.size("t/one/a.csv"))).status).toBe(503);
      expect((await apiErrorOf(wrong.put("t/x.csv", Buffer.from("x")))).status).toBe(503);
      expect((await apiErrorOf(wrong.put("t/x.csv", Readable.from([Buffer.from("x")])))).status).toBe(503);
      wrong.close();
    }
    expect(await storage.size("t/x.csv")).toBeUndefined();
  });

  it("gives 503 while the server is stopped and works again once it is back", async () => {
    await storage.put("t/restart/a.csv", Buffer.from("kept"));
    await s3.stop();
    try {
      expect((await apiErrorOf(storage.size("t/restart/a.csv"))).status).toBe(503);
    } finally {
      await s3.start();
    }
    expect(await text(await storage.get("t/restart/a.csv"))).toBe("kept");
  });
});

describe("configuration", () => {
  it("keeps local disk without S3_BUCKET and builds the bucket's store with it", async () => {
    const local = loadConfig({ DATA_DIR: "/tmp/lead-data" });
    expect(local.s3).toBeUndefined();
    expect(await createFileStorage(local)).toBeInstanceOf(LocalDiskStorage);

    const config = loadConfig({
      S3_BUCKET: "lead-files",
      S3_ENDPOINT: "http://127.0.0.1:9000/",
      S3_REGION: "eu-central-1",
      S3_FORCE_PATH_STYLE: "true",
    });
    expect(config.s3).toEqual({
      bucket: "lead-files",
      endpoint: "http://127.0.0.1:9000",
      region: "eu-central-1",
      forcePathStyle: true,
    });
    const made = await createFileStorage(config);
    expect(made).toBeInstanceOf(S3Storage);
    (made as S3Storage).close();
    expect(loadConfig({ S3_BUCKET: "b" }).s3).toEqual({
      bucket: "b",
      endpoint: undefined,
      region: "us-east-1",
      forcePathStyle: false,
    });
  });

  it("refuses S3 settings without a bucket and a path style that is not true or false", () => {
    expect(() => loadConfig({ S3_ENDPOINT: "http://127.0.0.1:9000" })).toThrow(/need S3_BUCKET/);
    expect(() => loadConfig({ S3_BUCKET: "b", S3_FORCE_PATH_STYLE: "yes" })).toThrow(/true or false/);
  });

  it("never logs credentials", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _e, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = pino({ redact: { paths: REDACTED_PATHS, censor: "[redacted]" } }, sink);
    logger.info(
      { credentials: { accessKeyId: "AKIA", secretAccessKey: "s3cr3t", sessionToken: "tok3n" } },
      "x",
    );
    expect(lines.join("")).not.toMatch(/s3cr3t|tok3n/);
  });
});

describe("the bucket itself", () => {
  it("holds what was written under the same key (other tools and hosts read it)", async () => {
    await storage.put("t/shared/a.csv", Buffer.from("shared"));
    const client = new S3Client({
      region: "us-east-1",
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    });
    const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: "t/shared/a.csv" }));
    expect(await got.Body?.transformToString()).toBe("shared");
    client.destroy();
  });
});
