import { Readable } from "node:stream";

/** A small HTML page of the OAuth callback. */
export interface CallbackPage {
  status: 200 | 400;
  title: string;
  message: string;
  /** A code for programs reading the page (`connected`, `key_revoked`, the CRM's error...). */
  code: string;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page as HTML. */
export function pageHtml(page: CallbackPage): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(page.title)}</title>` +
    `<meta name="robots" content="noindex"></head><body><main><h1>${escapeHtml(page.title)}</h1>` +
    `<p>${escapeHtml(page.message)}</p><p data-code="${escapeHtml(page.code)}">Code: ${escapeHtml(page.code)}</p>` +
    `</main></body></html>`
  );
}

/** The page as a file answer's body. */
export function pageFile(page: CallbackPage) {
  const html = Buffer.from(pageHtml(page), "utf8");
  return {
    fileName: "integration.html",
    contentType: "text/html" as const,
    size: html.length,
    body: Readable.from([html]),
  };
}
