import { parseArgs } from "node:util";
import { createAccountWithKey } from "../accounts/service.js";
import { createApiKey, revokeKey } from "../auth/service.js";
import { loadConfig } from "../config.js";
import { createDatabase, migrateToLatest } from "../db/database.js";
import { resolveDatabase } from "../db/resolve.js";
import { createLogger } from "../lib/logger.js";
import type { AdminCommand } from "./command.js";
import { adminLeadCommands } from "./lead-commands.js";

function intOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer`);
  return n;
}

const commands: Record<string, AdminCommand> = {
  "create-account": async (args, db) => {
    const { values } = parseArgs({
      args,
      options: {
        email: { type: "string" },
        plan: { type: "string" },
        status: { type: "string" },
        "monthly-credits": { type: "string" },
        "permanent-credits": { type: "string" },
      },
    });
    if (!values.email || !values.plan) throw new Error("create-account needs --email and --plan");
    const status = values.status ?? "active";
    if (status !== "active" && status !== "trialing" && status !== "canceled") {
      throw new Error("--status must be active, trialing or canceled");
    }
    return createAccountWithKey(db, {
      email: values.email,
      plan: values.plan,
      status,
      monthlyCredits: intOption(values["monthly-credits"], "monthly-credits"),
      permanentCredits: intOption(values["permanent-credits"], "permanent-credits"),
    });
  },
  "create-key": async (args, db) => {
    const { values } = parseArgs({
      args,
      options: { account: { type: "string" }, name: { type: "string" } },
    });
    const accountId = intOption(values.account, "account");
    if (accountId === undefined) throw new Error("create-key needs --account");
    const exists = await db
      .selectFrom("accounts")
      .select("id")
      .where("id", "=", accountId)
      .executeTakeFirst();
    if (!exists) throw new Error(`no account ${accountId}`);
    return createApiKey(db, accountId, values.name ?? "API key");
  },
  "revoke-key": async (args, db) => {
    const { values } = parseArgs({ args, options: { key: { type: "string" } } });
    if (!values.key) throw new Error("revoke-key needs --key");
    // This process has no key cache: API processes hear of it through the trigger's notification.
    const keyId = await revokeKey(db, values.key);
    if (keyId === undefined) throw new Error("no such key");
    return { keyId, revoked: true };
  },
  ...adminLeadCommands,
};

/** `npm run admin -- <command> [options]`: prints one JSON line; exit 1 with `{"error"}` on failure. */
async function main(): Promise<void> {
  const [name, ...args] = process.argv.slice(2);
  const command = name ? commands[name] : undefined;
  if (!command) {
    console.error(`usage: npm run admin -- <${Object.keys(commands).join("|")}> [options]`);
    process.exit(2);
  }
  const config = loadConfig(process.env);
  const logger = createLogger(process.env.LOG_LEVEL ?? "warn");
  const location = await resolveDatabase(config, logger);
  const { db } = createDatabase(location.url, 4);
  let exitCode = 0;
  try {
    await migrateToLatest(db);
    console.log(JSON.stringify(await command(args, db)));
  } catch (err) {
    console.log(JSON.stringify({ error: err instanceof Error ? err.message : String(err) }));
    exitCode = 1;
  } finally {
    await db.destroy();
    await location.stop();
  }
  process.exit(exitCode);
}

void main();
