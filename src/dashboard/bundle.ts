import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The dashboard's script: `dist/dashboard/app.js` when `npm run build` made it (`npm start`),
 * else bundled once in memory by esbuild from `client/main.ts` (tests and `npm run dev`). Nothing
 * is downloaded: esbuild and openapi-fetch are installed packages.
 */
export function loadDashboardScript(): Promise<string> {
  const built = join(here, "app.js");
  if (existsSync(built)) return Promise.resolve(readFileSync(built, "utf8"));
  return bundleInMemory(join(here, "client", "main.ts"));
}

async function bundleInMemory(entry: string): Promise<string> {
  const { build } = await import("esbuild");
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    target: "es2020",
    minify: true,
    write: false,
    logLevel: "silent",
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error("esbuild produced no dashboard script");
  return file.text;
}

/** The style sheet (a plain file beside this module's source). */
export function loadDashboardStyle(): string {
  for (const path of [join(here, "app.css"), join(here, "..", "..", "src", "dashboard", "app.css")]) {
    if (existsSync(path)) return readFileSync(path, "utf8");
  }
  throw new Error("the dashboard's app.css is missing");
}
