import { el } from "./dom.js";

/** Formatting shared by the integrations, schedules and billing pages. */

/** A timestamp of the API in the reader's locale, or a word for none. */
export function when(value: string | null | undefined, none = "never"): string {
  return value === null || value === undefined ? none : new Date(value).toLocaleString();
}

/** US cents as dollars, e.g. 1250 -> "$12.50". */
export function dollars(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

/** Fills a table with a header row of `headings` (the last ones may be blank action columns) and `rows`. */
export function fillTable(table: HTMLTableElement, headings: string[], rows: HTMLElement[]): void {
  table.replaceChildren(
    el("thead", {}, el("tr", {}, ...headings.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...rows),
  );
}

/** A row saying the list is empty, spanning `columns`. */
export function emptyRow(columns: number, text: string): HTMLElement {
  return el("tr", {}, el("td", { colspan: String(columns) }, text));
}

/** A button that runs `action` when clicked, disabled while it runs (no double submits). */
export function actionButton(
  label: string,
  attributes: Record<string, string>,
  action: () => Promise<void>,
): HTMLButtonElement {
  const button = el("button", { type: "button", ...attributes }, label);
  button.addEventListener("click", () => {
    button.disabled = true;
    void action().finally(() => {
      button.disabled = false;
    });
  });
  return button;
}
