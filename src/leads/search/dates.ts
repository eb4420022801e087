/**
 * Date bounds of the search (`lastBuyingSignalFrom`, `registrationDateTo`, ...): an ISO 8601 date
 * (`2026-09-01`) or date-time (`2026-09-01T12:00:00Z`; without an offset read as UTC; a space may
 * stand for the `T`), or a relative `rel:<n><unit>` resolved against the request time (`h` hours,
 * `d` days, `w` weeks, `m` months, `y` years; n a whole number 1-100,000).
 */
export interface DateBound {
  /** As sent (trimmed): stored in presets so that a relative bound stays relative. */
  text: string;
  /** The instant it stands for (a date alone: the start of that day, UTC). */
  at: Date;
  /** A date without a time of day. */
  dateOnly: boolean;
}

/** A From / To pair of one date filter. */
export interface DateRange {
  from: DateBound | null;
  to: DateBound | null;
}

/**
 * The date filters: parameter names (the first is the real service's, then our older ones) and
 * what a date-only `To` means: the start of that day (Last Buying Signal, as the real service
 * documents it) or the whole day.
 */
export const DATE_FILTERS = [
  { key: "lastBuyingSignal", names: ["lastBuyingSignal", "lastUpdated"], wholeDayTo: false },
  { key: "registrationDate", names: ["registrationDate"], wholeDayTo: true },
  { key: "timeScraped", names: ["timeScraped"], wholeDayTo: true },
] as const;
export type DateFilterKey = (typeof DATE_FILTERS)[number]["key"];

/** The earliest instant a bound resolves to (PostgreSQL's dates start at 4713 BC; ours at year 1). */
const EARLIEST = new Date("0001-01-01T00:00:00Z").getTime();

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;
const RELATIVE = /^rel:(\d{1,6})([hdwmy])$/i;

const FORMAT_MESSAGE =
  "must be an ISO 8601 date (2026-09-01) or date-time (2026-09-01T12:00:00Z), or rel:<n><h|d|w|m|y> (rel:30d)";

/** Moves `at` back by calendar months; a day the target month lacks is its last day (Mar 31 - 1m = Feb 28). */
function monthsBack(at: Date, months: number): void {
  const day = at.getUTCDate();
  at.setUTCDate(1);
  at.setUTCMonth(at.getUTCMonth() - months);
  const last = new Date(at.getTime());
  last.setUTCMonth(last.getUTCMonth() + 1, 0); // day 0 of the next month: this month's last day
  at.setUTCDate(Math.min(day, last.getUTCDate()));
}

/** Parses one bound; a string is the problem's message. */
export function parseDateBound(raw: string, now: Date): DateBound | string {
  const text = raw.trim();
  const rel = RELATIVE.exec(text);
  if (rel) {
    const n = Number(rel[1]);
    if (n < 1 || n > 100_000) return "the n of rel:<n><unit> must be a whole number from 1 to 100000";
    const at = new Date(now.getTime());
    switch (rel[2]!.toLowerCase()) {
      case "h":
        at.setTime(at.getTime() - n * 3_600_000);
        break;
      case "d":
        at.setTime(at.getTime() - n * 86_400_000);
        break;
      case "w":
        at.setTime(at.getTime() - n * 7 * 86_400_000);
        break;
      default:
        monthsBack(at, rel[2]!.toLowerCase() === "m" ? n : n * 12);
    }
    return { text, at: new Date(Math.max(at.getTime(), EARLIEST)), dateOnly: false };
  }
  const iso = ISO.exec(text);
  if (!iso) return FORMAT_MESSAGE;
  const [, y, mo, d, h, mi, s, frac, offset] = iso;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  if (year < 1 || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return "is not a real calendar date";
  }
  if (h === undefined) return { text, at: date, dateOnly: true };
  const hours = Number(h);
  const minutes = Number(mi);
  const seconds = Number(s ?? 0);
  if (hours > 23 || minutes > 59 || seconds > 59) return "is not a real time of day";
  let ms = date.getTime() + ((hours * 60 + minutes) * 60 + seconds) * 1000;
  if (frac) ms += Math.floor(Number(frac) * 1000);
  if (offset && offset.toUpperCase() !== "Z") {
    const sign = offset.startsWith("-") ? -1 : 1;
    const digits = offset.slice(1).replace(":", "");
    const offHours = Number(digits.slice(0, 2));
    const offMinutes = Number(digits.slice(2));
    if (offHours > 23 || offMinutes > 59) return "has an invalid time zone offset";
    ms -= sign * (offHours * 60 + offMinutes) * 60_000;
  }
  return { text, at: new Date(Math.max(ms, EARLIEST)), dateOnly: false };
}

/** The UTC calendar day (YYYY-MM-DD) of an instant. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The first instant after a `To` bound: the next day's start for a date-only bound of a whole-day filter. */
export function endOf(bound: DateBound, wholeDayTo: boolean): Date {
  return new Date(bound.at.getTime() + (bound.dateOnly && wholeDayTo ? 86_400_000 : 1));
}
