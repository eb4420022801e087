import { isLeadBlacklisted } from "../../export-blacklist/match.js";

/** Most leads one export holds (openapi.yaml, exportLeads). */
export const MAX_EXPORT_LEADS = 100_000;
/** Most leads one export puts into the account's lead reservoir. */
export const MAX_RESERVOIR_LEADS = 100_000;

/** The cost controls of an export request (null: not given). */
export interface ExportCaps {
  maxLeads: number | null;
  maxResults: number | null;
  maxCredits: number | null;
}

/** A matching lead, in the order the export considers them (see candidateOrder). */
export interface Candidate {
  id: number;
  /** The account already received the lead (free: the sticky rule). */
  received: boolean;
  /** The lead is in the account's lead reservoir. */
  reserved: boolean;
  registeredUrl: string | null;
  crawledUrl: string | null;
}

/** Which leads an export takes. */
export interface Selection {
  /**
   * The ids of the leads to export, in file order (plain numbers: one object per lead, held for
   * the whole export, was 6 MB of promoted garbage per 100,000 leads).
   */
  ids: number[];
  /** New leads among `leads` (each costs 1 credit). */
  newLeads: number;
  /** Leads left out by `maxLeads`, for the lead reservoir, in order. */
  overflow: number[];
  /** New leads that would be in the export were left out because the balance could not pay. */
  capped: boolean;
}

/** Whether new leads come before previously exported ones (`maxCredits` or `maxResults` given). */
export function newLeadsFirst(caps: ExportCaps): boolean {
  return caps.maxCredits !== null || caps.maxResults !== null;
}

/**
 * Most leads the export itself may hold: 100,000, `maxLeads`, `maxResults` and the format's
 * capacity (`parts_max_rows`), whichever is smallest.
 */
export function exportLimit(caps: ExportCaps, formatCapacity: number | null): number {
  return Math.min(
    MAX_EXPORT_LEADS,
    caps.maxLeads ?? Infinity,
    caps.maxResults ?? Infinity,
    formatCapacity ?? Infinity,
  );
}

/**
 * Picks the leads of an export from the candidates, which arrive in batches in export order (reservoir
 * first, then new before previously exported when `newLeadsFirst`, then the sort). Blacklisted
 * leads are skipped before anything is counted. A new lead is taken while the credits allow it
 * (`maxCredits`, then the spendable balance `balanceCap` in whole credits); previously exported
 * leads are free. Once the export is full, further candidates (up to `maxResults` in all and
 * 100,000) are the overflow for the lead reservoir, but only when `maxLeads` is given; the
 * overflow costs nothing now, so no credit cap applies to it.
 */
export async function selectLeads(
  candidates: AsyncIterable<readonly Candidate[]>,
  options: {
    caps: ExportCaps;
    formatCapacity: number | null;
    balanceCap: number;
    blacklist: ReadonlySet<string>;
  },
): Promise<Selection> {
  const { caps, balanceCap, blacklist } = options;
  const limit = exportLimit(caps, options.formatCapacity);
  const creditLimit = caps.maxCredits ?? Infinity;
  const resultLimit = Math.min(caps.maxResults ?? Infinity, MAX_EXPORT_LEADS + MAX_RESERVOIR_LEADS);
  const keepOverflow = caps.maxLeads !== null;
  const selection: Selection = { ids: [], newLeads: 0, overflow: [], capped: false };

  for await (const batch of candidates) {
    for (const candidate of batch) {
      if (isLeadBlacklisted(blacklist, candidate)) continue;
      if (selection.ids.length < limit) {
        if (!candidate.received) {
          if (selection.newLeads >= creditLimit) continue;
          if (selection.newLeads >= balanceCap) {
            selection.capped = true;
            continue;
          }
          selection.newLeads += 1;
        }
        selection.ids.push(candidate.id);
        continue;
      }
      const room = Math.min(resultLimit - selection.ids.length, MAX_RESERVOIR_LEADS);
      if (!keepOverflow || selection.overflow.length >= room) return selection;
      selection.overflow.push(candidate.id);
    }
  }
  return selection;
}
