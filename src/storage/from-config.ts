import { join } from "node:path";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { FileStorage } from "./file-storage.js";
import { LocalDiskStorage } from "./local-disk.js";

/**
 * The file store of a process: the bucket when `S3_BUCKET` is set (every API and worker process
 * then shares it, README "Running on several hosts"), else local disk under `DATA_DIR/files`.
 * The AWS SDK is loaded only for a bucket (about 0.4 s and 24 MB a process otherwise spends).
 */
export async function createFileStorage(
  config: Pick<Config, "dataDir" | "s3">,
  logger?: Logger,
): Promise<FileStorage> {
  if (!config.s3) return new LocalDiskStorage(join(config.dataDir, "files"));
  const { S3Storage } = await import("./s3.js");
  const { bucket, region, endpoint, forcePathStyle } = config.s3;
  return new S3Storage({ bucket, region, forcePathStyle, ...(endpoint ? { endpoint } : {}) }, logger);
}
