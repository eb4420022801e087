import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../src/http/errors.js";
import { LocalDiskStorage } from "../src/storage/local-disk.js";

// A full disk under the local file store (issue 36, scenario 6; the whole scenario with an export
// is `npm run faults -- storage-full`): a write that runs out of space is 503
// `service_unavailable` with Retry-After, not a bare error, and leaves no partial file. Needs a
// tmpfs of its own (root, as on the development machine and in CI here); skipped where mount is
// not allowed.

const dir = mkdtempSync(join(tmpdir(), "lead-faults-disk-"));
let mounted = false;
try {
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", dir], { stdio: "ignore" });
  mounted = true;
} catch {
  mounted = false;
}

afterAll(() => {
  if (mounted) execFileSync("umount", [dir]);
  rmSync(dir, { recursive: true, force: true });
});

describe.runIf(mounted)("the local file store on a full disk", () => {
  let storage: LocalDiskStorage;
  beforeAll(() => {
    storage = new LocalDiskStorage(dir);
  });

  it("refuses the write with 503 service_unavailable and leaves nothing behind", async () => {
    // A streamed file larger than the disk, written in 16 KB chunks as an export writes it.
    const chunks = Array.from({ length: 40 }, () => Buffer.alloc(16 * 1024, 120));
    const err = await storage.put("exports/1/big.csv", Readable.from(chunks)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 503, code: "service_unavailable" });
    expect(Number((err as ApiError).headers["Retry-After"])).toBeGreaterThan(0);
    expect(readdirSync(join(dir, "exports", "1"))).toEqual([]);
    expect(await storage.size("exports/1/big.csv")).toBeUndefined();
  });

  it("writes again once the file fits", async () => {
    expect(await storage.put("exports/2/small.csv", Buffer.from("id\n1\n"))).toEqual({ size: 5 });
    expect(await storage.size("exports/2/small.csv")).toBe(5);
  });
});
