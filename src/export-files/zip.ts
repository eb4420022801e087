import type { Archiver, ZipOptions } from "archiver";
import { createRequire } from "node:module";
import type { Readable } from "node:stream";
import type { FileStorage } from "../storage/file-storage.js";

// archiver 7 is CommonJS (`archiver(format, options)`); @types/archiver 8 describes the ESM API of
// archiver 8, so the factory is loaded through require and typed here.
const archiver = createRequire(import.meta.url)("archiver") as (
  format: "zip",
  options: ZipOptions,
) => Archiver;

/** A streaming ZIP archive; members are deflated at `level` (0-9) unless appended with `store`. */
export function createZip(level = 6): Archiver {
  return archiver("zip", { zlib: { level } });
}

/** A stored file to put in a ZIP under `name`. */
export interface ZipMember {
  name: string;
  storageKey: string;
}

/**
 * A ZIP of stored files, streamed: each member is read from storage only when the archive reaches
 * it. XLSX members (already compressed) are stored, others deflated.
 */
export function zipStoredFiles(storage: FileStorage, members: ZipMember[]): Readable {
  const archive = createZip();
  void (async () => {
    try {
      for (const member of members) {
        const body = await storage.get(member.storageKey);
        if (!body) throw new Error(`stored file ${member.storageKey} is missing`);
        archive.append(body, { name: member.name, store: member.name.endsWith(".xlsx") });
        // One member at a time: wait until archiver has consumed this one before opening the next.
        await new Promise<void>((resolve, reject) => {
          body.once("end", resolve);
          body.once("close", resolve);
          body.once("error", reject);
        });
      }
      await archive.finalize();
    } catch (err) {
      archive.destroy(err as Error);
    }
  })();
  return archive;
}
