import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import type { IncomingMessage } from "node:http";
import { S3Storage, type S3Settings } from "../../src/storage/s3.js";
import { signatureProblem } from "./sigv4-check.js";

/** s3rver's default key pair: it checks every request's signature against it. */
export const S3RVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

/** The Koa context of a request, as far as the signature check uses it. */
interface KoaContext {
  req: IncomingMessage;
  status: number;
  type: string;
  body: unknown;
}
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  /** Koa's middleware list (composed when the server starts). */
  middleware: ((ctx: KoaContext, next: () => Promise<void>) => Promise<void>)[];
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;
const S3rver = createRequire(import.meta.url)("s3rver") as S3rverClass;

/**
 * Refuses, as S3 does, a request that is unsigned or whose SigV4 signature does not match (s3rver
 * itself checks only the key id and a presigned URL's expiry): test/helpers/sigv4-check.ts.
 */
async function checkSignature(ctx: KoaContext, next: () => Promise<void>): Promise<void> {
  const problem = await signatureProblem(ctx.req, {
    [S3RVER_CREDENTIALS.accessKeyId]: S3RVER_CREDENTIALS.secretAccessKey,
  });
  if (!problem) return next();
  ctx.status = 403;
  ctx.type = "application/xml";
  const code = problem === "the request is not signed" ? "AccessDenied" : "SignatureDoesNotMatch";
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${problem}</Message></Error>`;
}

/** A local S3-protocol server (s3rver) with signature checking on, holding one bucket. */
export interface LocalS3 {
  bucket: string;
  endpoint: string;
  port: number;
  /** Settings of a store on this server's bucket. */
  settings(overrides?: Partial<S3Settings>): S3Settings;
  storage(overrides?: Partial<S3Settings>): S3Storage;
  /** Stops the server (its data stays until `destroy`), and starts it again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** Starts s3rver on a free port of 127.0.0.1 with `bucket` created. */
export async function startLocalS3(bucket = "lead-files"): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), "lead-s3rver-"));
  const make = (port: number) => {
    const made = new S3rver({
      address: "127.0.0.1",
      port,
      silent: true,
      directory,
      configureBuckets: [{ name: bucket }],
      allowMismatchedSignatures: false,
      vhostBuckets: false,
    });
    made.middleware.unshift(checkSignature);
    return made;
  };
  let server: S3rverInstance | undefined = make(0);
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const settings = (overrides: Partial<S3Settings> = {}): S3Settings => ({
    bucket,
    region: "us-east-1",
    endpoint,
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
    requestTimeoutMs: 5_000,
    ...overrides,
  });
  return {
    bucket,
    endpoint,
    port,
    settings,
    storage: (overrides) => new S3Storage(settings(overrides)),
    async stop() {
      await server?.close();
      server = undefined;
    },
    async start() {
      server = make(port);
      await server.run();
    },
    async destroy() {
      await server?.close();
      server = undefined;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
