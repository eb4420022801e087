import { TENTHS } from "./ledger.js";

/**
 * What each priced item costs, in tenths of a credit (the ledger's unit, see ledger.ts). `lead`:
 * a lead delivered to an account for the first time, however it is delivered (search, export,
 * and later push-lead, schedules and enrichment database matches); a lead already received is
 * free (the sticky rule, src/leads/versions.ts). An item with another price, such as an
 * enrichment live fetch at 0.1 credit, gets its own key here (`enrichmentLiveFetch: 1`).
 */
export const PRICE_TENTHS = {
  lead: 1 * TENTHS,
  /** A live-fetched enrichment result with the requested contact type (0.1 credit). */
  enrichmentLiveFetch: 1,
} as const satisfies Record<string, number>;

/** An item the service charges for. */
export type PricedItem = keyof typeof PRICE_TENTHS;

/** How many of each priced item a delivery handed over for the first time: what it pays for. */
export type NewItems = Partial<Record<PricedItem, number>>;

/** What the items cost, in tenths of a credit. */
export function costTenths(items: NewItems): number {
  let tenths = 0;
  for (const [item, count] of Object.entries(items) as [PricedItem, number][]) {
    tenths += count * PRICE_TENTHS[item];
  }
  return tenths;
}
