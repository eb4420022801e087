import { isLeadBlacklisted } from "../../export-blacklist/match.js";
import type { SendCandidate } from "./candidates.js";

/** Which leads a send takes, and which wait in the reservoir. */
export interface SendSelection {
  /** The leads to send, in order. */
  leads: { id: number; received: boolean }[];
  /** New leads among `leads` (1 credit each). */
  newLeads: number;
  /** Leads left for the next run, in order. */
  reservoir: number[];
  /** Some new lead was left out because the balance could not pay for it. */
  capped: boolean;
}

/**
 * Takes the candidates in order: blacklisted leads are skipped (never sent, never kept); a lead is
 * sent while the send has room (`sendCap`) and, when new to the account, while the balance pays
 * (`balanceCap` whole credits); every other lead waits in the reservoir (at most `reservoirCap`).
 */
export function selectSend(
  candidates: readonly SendCandidate[],
  options: { sendCap: number; balanceCap: number; reservoirCap: number; blacklist: ReadonlySet<string> },
): SendSelection {
  const selection: SendSelection = { leads: [], newLeads: 0, reservoir: [], capped: false };
  for (const candidate of candidates) {
    if (isLeadBlacklisted(options.blacklist, candidate)) continue;
    const room = selection.leads.length < options.sendCap;
    const paid = candidate.received || selection.newLeads < options.balanceCap;
    if (room && paid) {
      selection.leads.push({ id: candidate.id, received: candidate.received });
      if (!candidate.received) selection.newLeads += 1;
      continue;
    }
    if (room && !paid) selection.capped = true;
    if (selection.reservoir.length < options.reservoirCap) selection.reservoir.push(candidate.id);
  }
  return selection;
}
