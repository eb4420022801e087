import type { components } from "../../../generated/api.js";
import { el } from "./dom.js";

type Lead = components["schemas"]["Lead"];
type PreviewResult = components["schemas"]["LeadPreviewResult"];
type SearchResult = components["schemas"]["LeadSearchResult"];
type Pagination = components["schemas"]["LeadPagination"];

/**
 * Every lead field is text written by third parties: it is shown as text (el() makes text nodes),
 * never parsed as markup.
 */
function text(value: string | null | undefined): string {
  return value === null || value === undefined || value === "" ? "—" : value;
}

function date(value: string | null): string {
  return value === null ? "—" : value.slice(0, 10);
}

const COLUMNS = [
  "Company",
  "Website",
  "City",
  "State",
  "Phone",
  "E-mail",
  "Category",
  "Description",
  "Last buying signal",
];

function leadRow(lead: Lead, received?: boolean): HTMLTableRowElement {
  return el(
    "tr",
    { "data-lead-id": String(lead.id) },
    el("td", { class: "company" }, text(lead.companyName)),
    el("td", {}, text(lead.website)),
    el("td", { class: "city" }, text(lead.city)),
    el("td", {}, text(lead.state)),
    el("td", { class: "phone" }, text(lead.phone)),
    el("td", { class: "email" }, text(lead.email)),
    el("td", {}, text(lead.category)),
    el("td", { class: "description" }, text(lead.description)),
    el("td", {}, date(lead.lastBuyingSignal)),
    received === undefined ? null : el("td", {}, received ? "received" : "new"),
  );
}

function leadTable(
  id: string,
  caption: string,
  leads: Lead[],
  received?: (lead: Lead) => boolean,
): HTMLElement {
  const headers = received ? [...COLUMNS, "Yours"] : COLUMNS;
  return el(
    "div",
    { class: "table-scroll", tabindex: "0", role: "region", "aria-label": caption },
    el(
      "table",
      { id },
      el("caption", {}, caption),
      el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...leads.map((lead) => leadRow(lead, received?.(lead)))),
    ),
  );
}

function pageText(p: Pagination): string {
  return `Page ${p.page} of ${Math.max(p.pages, 1)} (${p.total} leads, ${p.limit} per page)`;
}

/** The free preview: what the search matches and costs, and the page with contacts masked. */
export function previewView(result: PreviewResult): HTMLElement {
  if (result.requiresKeywords) {
    return el("section", { id: "preview" }, el("p", {}, text(result.message)));
  }
  const s = result.summary;
  return el(
    "section",
    { id: "preview", "aria-labelledby": "preview-heading" },
    el("h2", { id: "preview-heading" }, "Preview"),
    el(
      "dl",
      { id: "preview-summary" },
      ...(
        [
          ["Matching leads", String(s.totalMatches)],
          ["New to you", String(s.newLeads)],
          ["Already received (free)", String(s.alreadyReceived)],
          ["Cost to export all", `${s.exportCost} credits`],
          ["Your credits", String(s.creditsRemaining)],
        ] as const
      ).map(([label, value]) => el("div", { class: "row" }, el("dt", {}, label), el("dd", {}, value))),
    ),
    el("p", {}, `${pageText(result.pagination)}. Contact details of leads you have not received are masked.`),
    leadTable("preview-leads", "Preview of the matching leads", result.leads, (lead) =>
      "contactExported" in lead ? Boolean(lead.contactExported) : false,
    ),
  );
}

/** A bought page: the leads with their contacts, and what it cost. */
export function boughtView(result: SearchResult): HTMLElement {
  if (result.requiresKeywords) {
    return el("section", { id: "bought" }, el("p", {}, text(result.message)));
  }
  return el(
    "section",
    { id: "bought", "aria-labelledby": "bought-heading" },
    el("h2", { id: "bought-heading" }, "Bought leads"),
    el(
      "p",
      { id: "bought-charge" },
      `Charged ${result.creditsUsed} credits; ${result.creditsRemaining} credits left. ${pageText(result.pagination)}.`,
    ),
    leadTable("bought-leads", "Leads of the bought page", result.leads),
  );
}
