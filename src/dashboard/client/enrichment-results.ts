import { el } from "./dom.js";
import { fillTable } from "./format.js";

/** Rows of the result file shown in the page; the download has them all. */
const PREVIEW_ROWS = 50;

/** Columns of the result file shown, by header name (the file has the default export columns too). */
const COLUMNS: [header: string, heading: string, cls: string][] = [
  ["Submitted URL", "Website", "url"],
  ["Status", "Status", "row-status"],
  ["Source", "Source", "source"],
  ["Credits Charged", "Credits", "row-credits"],
  ["companyName", "Company", "company"],
  ["phone", "Phone", "phone"],
  ["email", "E-mail", "email"],
];

/** The records of a CSV text (RFC 4180: quoted fields, doubled quotes, CRLF or LF). */
export function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i += 1;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += c;
  }
  if (field !== "" || row.length > 0) rows.push([...row, field]);
  return rows;
}

/**
 * The first rows of a run's result file as a table: read through its signed link when the link
 * is on this origin (the page's CSP allows no other: with object storage the file is only
 * downloaded). Every cell is text; company names come from third parties' websites.
 */
export async function resultPreview(link: string, rowCount: number): Promise<HTMLElement> {
  const node = el("div", { id: "enrichment-results" }, el("h3", {}, "Results"));
  if (new URL(link, window.location.href).origin !== window.location.origin) {
    node.append(el("p", {}, "Download the file to see the results."));
    return node;
  }
  const response = await fetch(link, { credentials: "omit" });
  if (!response.ok) {
    node.append(
      el("p", {}, `The result file could not be read (HTTP ${response.status}). Download it instead.`),
    );
    return node;
  }
  const [header = [], ...records] = csvRows((await response.text()).replace(/^\uFEFF/, ""));
  const shown = COLUMNS.filter(([name]) => header.includes(name));
  const table = el("table", { id: "enrichment-result-rows" });
  fillTable(
    table,
    shown.map(([, heading]) => heading),
    records
      .slice(0, PREVIEW_ROWS)
      .map((record) =>
        el(
          "tr",
          {},
          ...shown.map(([name, , cls]) => el("td", { class: cls }, record[header.indexOf(name)] ?? "")),
        ),
      ),
  );
  table.prepend(
    el(
      "caption",
      {},
      rowCount > PREVIEW_ROWS ? `The first ${PREVIEW_ROWS} of ${rowCount} rows` : `All ${rowCount} rows`,
    ),
  );
  node.append(
    el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "Results" }, table),
  );
  return node;
}
