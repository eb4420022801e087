#!/usr/bin/env node
// Regenerates every artefact derived from spec/: openapi.yaml (TypeSpec -> OpenAPI 3.1) and
// generated/api.ts (openapi-typescript). With --check it builds into a temporary folder and
// fails when the committed files differ (stale or hand-edited). Compiler warnings are failures.
import { execFileSync } from "node:child_process";
import {
  mkdtempSync,
  readFileSync,
  readdirSync,
  writeFileSync,
  mkdirSync,
  existsSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";
import { postProcess } from "./openapi-post.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => join(root, "node_modules", ".bin", name);
const check = process.argv.includes("--check");

const YAML_HEADER = "# Generated from spec/ by `npm run gen`. Do not edit by hand.\n";
const TS_HEADER =
  "/* eslint-disable */\n// Generated from openapi.yaml by `npm run gen` (openapi-typescript). Do not edit by hand.\n";

function run(cmd, args) {
  try {
    execFileSync(cmd, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  } catch (err) {
    process.stderr.write(String(err.stdout ?? "") + String(err.stderr ?? ""));
    process.exit(1);
  }
}

const work = mkdtempSync(join(tmpdir(), "lead-gen-"));
try {
  run(bin("tsp"), ["compile", "spec", "--output-dir", join(work, "tsp"), "--warn-as-error"]);
  // TypeSpec's output, then the steps of scripts/openapi-post.mjs (docs/contract.md says why).
  const emitted = parse(readFileSync(join(work, "tsp", "@typespec", "openapi3", "openapi.yaml"), "utf8"));
  const examples = {};
  const examplesDir = join(root, "spec", "examples");
  for (const file of readdirSync(examplesDir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    Object.assign(examples, JSON.parse(readFileSync(join(examplesDir, file), "utf8")));
  }
  const document = postProcess(emitted, examples);
  const yamlText = YAML_HEADER + stringify(document, { lineWidth: 0, aliasDuplicateObjects: false });
  const yamlPath = join(work, "openapi.yaml");
  writeFileSync(yamlPath, yamlText);
  const tsPath = join(work, "api.ts");
  run(bin("openapi-typescript"), [
    yamlPath,
    "-o",
    tsPath,
    "--root-types",
    "--root-types-no-schema-prefix",
    "--enum-values",
  ]);
  const tsText = TS_HEADER + readFileSync(tsPath, "utf8");

  const outputs = [
    ["openapi.yaml", yamlText],
    ["generated/api.ts", tsText],
  ];
  if (check) {
    const stale = outputs.filter(
      ([file, text]) => !existsSync(join(root, file)) || readFileSync(join(root, file), "utf8") !== text,
    );
    if (stale.length > 0) {
      console.error(`Stale generated files (run \`npm run gen\`): ${stale.map(([f]) => f).join(", ")}`);
      process.exit(1);
    }
    console.log("gen:check: openapi.yaml and generated/ are up to date");
  } else {
    mkdirSync(join(root, "generated"), { recursive: true });
    for (const [file, text] of outputs) writeFileSync(join(root, file), text);
    console.log("gen: wrote openapi.yaml and generated/api.ts");
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
