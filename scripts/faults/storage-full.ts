import { readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { api, moneyOf, newAccount, sleep, startService, type ScenarioResult } from "./harness.js";
import { BROAD_KEYWORDS } from "./postgres-outage.js";

// Scenario 6 (issue 36): the disk of the file store fills up in the middle of an export. DATA_DIR/files
// is a 4 MB tmpfs, nearly filled by a ballast file, so the export's file cannot be written whole.
// The job fails with a clear error, nothing is charged, no export is listed and no partial file
// is left; once space is freed the next export works and is charged for what it delivered.

const DISK_BYTES = 4 * 1024 * 1024;
/** What the ballast leaves free: less than the export's file. */
const FREE_BYTES = 96 * 1024;
const EXPORT_CREDITS = 3_000;

/** Files under `dir` (recursively), with their sizes. */
function filesUnder(dir: string): { path: string; size: number }[] {
  const found: { path: string; size: number }[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(path));
    else found.push({ path, size: statSync(path).size });
  }
  return found;
}

async function exportOnce(
  base: string,
  key: string,
): Promise<{ status: number; error: string; message: string }> {
  const submit = await api(
    base,
    key,
    "POST",
    "/leads/export",
    { filters: { positiveKeywords: BROAD_KEYWORDS.split(",") }, maxCredits: EXPORT_CREDITS },
    30_000,
    { prefer: "respond-async" },
  );
  const id = submit.headers.get("x-svc-job-id");
  if (!id)
    return {
      status: submit.status,
      error: String(submit.body.error ?? ""),
      message: String(submit.body.message ?? ""),
    };
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const poll = await api(base, key, "GET", `/jobs/${id}`, undefined, 30_000, { prefer: "wait=20" });
    if (poll.status !== 202) {
      return {
        status: poll.status,
        error: String(poll.body.error ?? ""),
        message: String(poll.body.message ?? ""),
      };
    }
    await sleep(200);
  }
  return { status: 0, error: "unfinished", message: "" };
}

export async function storageFull(): Promise<ScenarioResult> {
  const service = await startService({ leads: 6_000, filesDiskBytes: DISK_BYTES });
  const filesDir = join(service.settings.dataDir, "files");
  const ballast = join(filesDir, "ballast.bin");
  try {
    const account = await newAccount(service.db, "disk");
    const used = filesUnder(filesDir).reduce((sum, f) => sum + f.size, 0);
    writeFileSync(ballast, Buffer.alloc(Math.max(0, DISK_BYTES - used - FREE_BYTES)));
    const failed = await exportOnce(service.base, account.apiKey);
    const afterFailure = await moneyOf(service.db, account.accountId);
    const listed = await api(service.base, account.apiKey, "GET", "/export-history");
    const listedCount = ((listed.body.data as unknown[] | undefined) ?? []).length;
    const leftovers = filesUnder(filesDir).filter((f) => f.path !== ballast);

    rmSync(ballast);
    const next = await exportOnce(service.base, account.apiKey);
    const afterNext = await moneyOf(service.db, account.accountId);
    const listedNext = await api(service.base, account.apiKey, "GET", "/export-history");
    const listedNextCount = ((listedNext.body.data as unknown[] | undefined) ?? []).length;

    const failures: string[] = [];
    if (failed.status < 400) failures.push(`the export on a full disk answered ${failed.status}`);
    if (failed.status === 500 && failed.error === "internal_error")
      failures.push("the failure is a bare 500 internal_error");
    if (afterFailure.chargedTenths !== 0 || afterFailure.leads !== 0) {
      failures.push(
        `charged ${afterFailure.chargedTenths / 10} for ${afterFailure.leads} leads on the failed export`,
      );
    }
    if (listedCount !== 0) failures.push(`${listedCount} exports listed after the failure`);
    if (leftovers.length)
      failures.push(`partial files left: ${leftovers.map((f) => `${f.path} (${f.size} B)`).join(", ")}`);
    if (next.status !== 200) failures.push(`the next export answered ${next.status} ${next.error}`);
    if (afterNext.chargedTenths !== afterNext.expectedTenths || afterNext.leads === 0) {
      failures.push(`the next export charged ${afterNext.chargedTenths / 10} for ${afterNext.leads} leads`);
    }
    if (listedNextCount !== 1) failures.push(`${listedNextCount} exports listed after the next export`);
    return {
      name: "storage-full",
      figures: {
        failedStatus: `${failed.status}:${failed.error}`,
        leftovers: leftovers.length,
        listedAfterFailure: listedCount,
        nextStatus: next.status,
        leads: afterNext.leads,
        charged: afterNext.chargedTenths / 10,
        expectedCharge: afterNext.expectedTenths / 10,
      },
      failures,
    };
  } finally {
    rmSync(ballast, { force: true });
    await service.close();
  }
}
