import type { components } from "../../../generated/api.js";
import { api, messageOf } from "./api.js";
import { el, messageBox, show } from "./dom.js";
import { leadHistorySection } from "./lead-history.js";

type FileEntry = components["schemas"]["ExportHistoryEntry"];

const WHEN = (value: string) => new Date(value).toLocaleString();

/** Bytes as a short readable size. */
function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

const UNAVAILABLE: Record<string, string> = {
  expired: "expired (files are kept 90 days)",
  missing: "no longer stored",
};

/**
 * The exports page: the export history (one row per file, downloaded through a signed link from
 * `GET /export-history/{id}/download-url`), and the lead export history (lead-history.ts) with
 * refresh and re-export. Headings and tables are drawn at once; the rows come after.
 */
export function exportsPage(): void {
  const box = messageBox();
  const files = el("tbody", {});
  const table = el(
    "div",
    { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "Export history" },
    el(
      "table",
      { id: "export-history" },
      el("caption", {}, "Your exported files, newest first"),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          ...["File", "Type", "Leads", "Size", "Format", "Made in", "Created", "Downloadable until", ""].map(
            (h) => el("th", { scope: "col" }, h),
          ),
        ),
      ),
      files,
    ),
  );

  async function loadFiles(): Promise<void> {
    const { data, error, response } = await api.GET("/api/v1/export-history");
    if (!data) return box.say(messageOf(error, response), "error");
    files.replaceChildren(...data.data.map(fileRow));
    if (data.data.length === 0) files.append(el("tr", {}, el("td", { colspan: "9" }, "No exports yet.")));
  }

  function fileRow(file: FileEntry): HTMLTableRowElement {
    const download = el(
      "button",
      { type: "button", class: "download", "aria-label": `Download ${file.fileName}` },
      "Download",
    );
    download.addEventListener("click", () => {
      void (async () => {
        const { data, error, response } = await api.GET("/api/v1/export-history/{id}/download-url", {
          params: { path: { id: file.id } },
        });
        if (!data) return box.say(messageOf(error, response), "error");
        box.say(`Downloading ${data.data.fileName}.`);
        // A signed link (15 minutes) answered with `Content-Disposition: attachment`: the page stays.
        window.location.assign(data.data.downloadUrl);
      })();
    });
    return el(
      "tr",
      { "data-export-id": String(file.id) },
      el("td", { class: "file-name" }, file.fileName),
      el("td", {}, file.fileType.toUpperCase()),
      el("td", {}, String(file.leadCount)),
      el("td", {}, size(file.fileSize)),
      el("td", {}, file.formatName ?? "default columns"),
      el("td", {}, file.exportMethod),
      el("td", {}, WHEN(file.createdAt)),
      el("td", {}, WHEN(file.expiresAt)),
      el(
        "td",
        {},
        file.downloadAvailable ? download : (UNAVAILABLE[file.unavailableReason ?? ""] ?? "unavailable"),
      ),
    );
  }

  const history = leadHistorySection(box, loadFiles);
  show(
    el("h1", {}, "Exports"),
    box.node,
    el(
      "section",
      { "aria-labelledby": "files-heading" },
      el("h2", { id: "files-heading" }, "Export history"),
      table,
    ),
    history.node,
  );
  void loadFiles();
  void history.load();
}
