import type { AdminCommand } from "./admin.js";

/** Admin commands of the lead database (import-leads, generate-leads). */
export const adminLeadCommands: Record<string, AdminCommand> = {};
