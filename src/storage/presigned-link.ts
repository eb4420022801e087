import type { FileStorage } from "./file-storage.js";

/** Longest lifetime of a presigned URL (Signature Version 4 refuses more than 7 days). */
export const MAX_PRESIGNED_SECONDS = 7 * 24 * 60 * 60;

/** A stored file to link to. */
export interface LinkedFile {
  storageKey: string;
  fileName: string;
  contentType: string;
}

/**
 * A presigned GET URL of the file when the store makes them (object storage), working until
 * `until` (whole seconds, at most 7 days); undefined when the store does not (local disk: the
 * caller hands out the API's own signed link). The answer's `expiresAt` is when the store stops
 * accepting the URL: signed at `now` rounded down to the second, plus its lifetime.
 */
export async function presignedLink(
  storage: FileStorage,
  file: LinkedFile,
  until: Date,
  now: Date,
): Promise<{ url: string; expiresAt: Date } | undefined> {
  if (!storage.presignedUrl) return undefined;
  const signedAt = new Date(Math.floor(now.getTime() / 1000) * 1000);
  const seconds = Math.min(
    MAX_PRESIGNED_SECONDS,
    Math.max(1, Math.floor((until.getTime() - signedAt.getTime()) / 1000)),
  );
  const url = await storage.presignedUrl(file.storageKey, {
    expiresInSeconds: seconds,
    fileName: file.fileName,
    contentType: file.contentType,
    signingDate: signedAt,
  });
  return { url, expiresAt: new Date(signedAt.getTime() + seconds * 1000) };
}
