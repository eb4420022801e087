import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { Readable, Transform } from "node:stream";
import type { Logger } from "pino";
import { contentDisposition } from "../http/answer.js";
import type { FileStorage, PresignOptions, StoredFile } from "./file-storage.js";
import { isMissingObject, storageUnavailable } from "./storage-errors.js";

/** How the service reaches its bucket (README, "Configuration": `S3_*`). */
export interface S3Settings {
  bucket: string;
  /** `S3_REGION` (default `us-east-1`). */
  region: string;
  /** `S3_ENDPOINT`: an S3-compatible store (MinIO, R2, a local server); unset: AWS itself. */
  endpoint?: string;
  /** `S3_FORCE_PATH_STYLE`: `endpoint/bucket/key` instead of `bucket.endpoint/key` (MinIO, s3rver). */
  forcePathStyle: boolean;
  /**
   * Fixed credentials (tests and benches); unset: the SDK's default chain (`AWS_ACCESS_KEY_ID` and
   * `AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, web identity, instance roles). Never logged.
   */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Most time one request to the store may take before it counts as down (default 60 s). */
  requestTimeoutMs?: number;
}

/**
 * Bytes of one part of a multipart upload; with MAX_PARTS_IN_FLIGHT it bounds what an upload holds
 * in memory (2 x 8 MB), whatever the file's size.
 */
const PART_BYTES = 8 * 1024 * 1024;
const MAX_PARTS_IN_FLIGHT = 2;
/** Objects removed at once by deletePrefix (one DELETE each: works on every S3-compatible store). */
const DELETE_CONCURRENCY = 8;

/** Counts the bytes that pass through (a streamed upload's size is known only at its end). */
function byteCounter(): Transform & { bytes: number } {
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      counter.bytes += chunk.length;
      done(null, chunk);
    },
  }) as Transform & { bytes: number };
  counter.bytes = 0;
  return counter;
}

/**
 * Files in one bucket of S3 or an S3-compatible store, keyed as on disk (`exports/42/...`).
 * Uploads stream as multipart uploads (a file is never held whole in memory) and become visible
 * only when complete, so a reader never sees half a file; links are presigned GET URLs.
 */
export class S3Storage implements FileStorage {
  readonly bucket: string;
  private readonly client: S3Client;
  private readonly logger: Logger | undefined;

  constructor(settings: S3Settings, logger?: Logger) {
    this.bucket = settings.bucket;
    this.logger = logger;
    const config: S3ClientConfig = {
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      // Checksums only where S3 requires them: the default trailing checksums of streamed uploads
      // are not understood by every S3-compatible store.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      requestHandler: { connectionTimeout: 5_000, requestTimeout: settings.requestTimeoutMs ?? 60_000 },
      maxAttempts: 3,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      ...(settings.credentials ? { credentials: settings.credentials } : {}),
    };
    this.client = new S3Client(config);
  }

  /** Runs one call to the store; a failure other than a missing object becomes 503. */
  private async call<T>(what: string, key: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (isMissingObject(err)) throw err;
      this.logger?.warn({ err: describe(err), what, key }, "file storage call failed");
      throw storageUnavailable(err);
    }
  }

  async put(key: string, body: Readable | Buffer): Promise<{ size: number }> {
    if (Buffer.isBuffer(body)) {
      await this.call("put", key, () =>
        this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body })),
      );
      return { size: body.length };
    }
    const counter = byteCounter();
    // A failing source fails the upload (and the upload aborts its parts) with the source's error.
    let sourceError: unknown;
    body.on("error", (err) => {
      sourceError = err;
      counter.destroy(err);
    });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: body.pipe(counter) },
      partSize: PART_BYTES,
      queueSize: MAX_PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      body.destroy();
      // An error of the source itself is not the store's: it goes on as it was.
      if (sourceError !== undefined) throw sourceError;
      this.logger?.warn({ err: describe(err), key }, "file storage upload failed");
      throw storageUnavailable(err);
    }
    return { size: counter.bytes };
  }

  async get(key: string): Promise<Readable | undefined> {
    return (await this.open(key))?.body;
  }

  async open(key: string): Promise<StoredFile | undefined> {
    try {
      const answer = await this.call("get", key, () =>
        this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key })),
      );
      return { size: answer.ContentLength ?? 0, body: answer.Body as Readable };
    } catch (err) {
      if (isMissingObject(err)) return undefined;
      throw err;
    }
  }

  async size(key: string): Promise<number | undefined> {
    try {
      const head = await this.call("head", key, () =>
        this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key })),
      );
      return head.ContentLength ?? 0;
    } catch (err) {
      if (isMissingObject(err)) return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.call("delete", key, () =>
      this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })),
    );
  }

  async deletePrefix(prefix: string): Promise<void> {
    if (!prefix.endsWith("/")) throw new Error(`a prefix to delete names a folder: ${prefix}`);
    let token: string | undefined;
    do {
      const page = await this.call("list", prefix, () =>
        this.client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
        ),
      );
      const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [object.Key] : []));
      for (let i = 0; i < keys.length; i += DELETE_CONCURRENCY) {
        await Promise.all(keys.slice(i, i + DELETE_CONCURRENCY).map((key) => this.delete(key)));
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async presignedUrl(key: string, options: PresignOptions): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentDisposition: contentDisposition(options.fileName),
      ResponseContentType: options.contentType,
    });
    return this.call("presign", key, () =>
      getSignedUrl(this.client, command, {
        expiresIn: options.expiresInSeconds,
        ...(options.signingDate ? { signingDate: options.signingDate } : {}),
      }),
    );
  }

  /** Closes the client's connections (at shutdown). */
  close(): void {
    this.client.destroy();
  }
}

/** What is logged of a failed call: its name and message (never the request, which is signed). */
function describe(err: unknown): { name: string; message: string } {
  return err instanceof Error
    ? { name: err.name, message: err.message }
    : { name: "unknown", message: String(err) };
}
