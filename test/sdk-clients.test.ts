import { execFile } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useJobRunner, useTestApp } from "./helpers/app.js";
import { buildAccount } from "./helpers/factories.js";
import { buildLeads, uniqueWord } from "./helpers/leads-factories.js";

// Clients generated from openapi.yaml as a new user would, at the generators' default settings:
// openapi-typescript + openapi-fetch, and @hey-api/openapi-ts. Ordinary programs against them
// (test/fixtures/sdk/) must type-check under `--strict` without casts: the profile, a lead's
// social profile read by key, a minimal export body with Idempotency-Key and Prefer, the files of
// a JSON export answer, a job poll and a subscription's `config` map.
const run = promisify(execFile);
const t = useTestApp();
useJobRunner(t);
const me = (res: { body: { data: { email: string } } }) => res.body.data.email;
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name: string) => join(root, "node_modules", ".bin", name);
const fixtures = join(root, "test", "fixtures", "sdk");
let work: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "sdk-clients-"));
  symlinkSync(join(root, "node_modules"), join(work, "node_modules"), "dir");
  mkdirSync(join(work, "openapi-fetch"));
  mkdirSync(join(work, "hey-api"));
  await Promise.all([
    run(bin("openapi-typescript"), [
      join(root, "openapi.yaml"),
      "-o",
      join(work, "openapi-fetch", "schema.ts"),
    ]),
    run(bin("openapi-ts"), ["-i", join(root, "openapi.yaml"), "-o", join(work, "hey-api", "client")], {
      cwd: work,
    }),
  ]);
  copyFileSync(join(fixtures, "openapi-fetch-program.ts"), join(work, "openapi-fetch", "program.ts"));
  copyFileSync(join(fixtures, "hey-api-program.ts"), join(work, "hey-api", "program.ts"));
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Runs tsc --strict on one folder of the work directory; resolves with its diagnostics. */
async function typeCheck(folder: string): Promise<string> {
  const config = join(work, `tsconfig.${folder}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: "ES2022",
        module: "ESNext",
        moduleResolution: "Bundler",
        lib: ["ES2022", "DOM", "DOM.Iterable"],
        types: [],
      },
      include: [folder],
    }),
  );
  try {
    await run(bin("tsc"), ["-p", config], { cwd: work });
    return "";
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? err);
  }
}

describe("generated SDK clients", () => {
  it("openapi-typescript + openapi-fetch: the program compiles under --strict", async () => {
    expect(await typeCheck("openapi-fetch")).toBe("");
  }, 120_000);

  it("@hey-api/openapi-ts: the program compiles under --strict", async () => {
    expect(await typeCheck("hey-api")).toBe("");
  }, 120_000);

  it("the openapi-fetch program runs against the service: every call answers as typed", async () => {
    const server: Server = t.app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { apiKey, auth } = await buildAccount(t.ctx.db, { permanentCredits: 100 });
      const keyword = uniqueWord();
      await buildLeads(t.ctx.db, 3, (i) => ({
        company_name: `${keyword} Plumbing ${i}`,
        state: "TX",
        social_profiles: JSON.stringify({ facebook: `https://facebook.com/${keyword}${i}` }),
      }));
      const created = await t
        .request()
        .post("/api/v1/integrations/webhook")
        .set(auth)
        .send({
          provider: "generic_webhook",
          displayName: "Sales",
          targetUrl: "https://hooks.example.com/leads",
          events: ["lead.created"],
        })
        .expect(201);
      // The fixture imports its generated types only (erased), so it runs as it is.
      const fixture = join(fixtures, "openapi-fetch-program.ts");
      const { program } = (await import(fixture)) as {
        program: (b: string, k: string, o: { keyword: string; integrationId: number }) => Promise<string[]>;
      };
      const seen = await program(baseUrl, apiKey, {
        keyword,
        integrationId: created.body.data.integration.id,
      });
      expect(seen).toContain(me(await t.request().get("/api/v1/me").set(auth)));
      expect(
        seen.some((s) => s.startsWith(`https://facebook.com/${keyword}`)),
        JSON.stringify(seen),
      ).toBe(true);
      expect(
        seen.some((s) => /\.csv$/.test(s)),
        JSON.stringify(seen),
      ).toBe(true);
      expect(seen, JSON.stringify(seen)).toContain("channel");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }, 120_000);

  it("the programs contain no casts", () => {
    for (const file of ["openapi-fetch-program.ts", "hey-api-program.ts"]) {
      const text = readFileSync(join(fixtures, file), "utf8");
      expect(text).not.toMatch(/\bas\s+(unknown|any|never|[A-Z{[])|<[A-Z][A-Za-z]*>\s*\w|!\./);
      expect(text).not.toMatch(/@ts-(ignore|expect-error|nocheck)/);
    }
  });
});
