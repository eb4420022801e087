import type { Db } from "../db/database.js";

/** An admin command: takes its arguments and the database, returns the JSON line to print. */
export type AdminCommand = (args: string[], db: Db) => Promise<unknown>;
