/** The pages the dashboard serves: each is the same shell, the script draws the page of its path. */
export const PAGE_PATHS = [
  "/",
  "/sign-in",
  "/keys",
  "/integrations",
  "/schedules",
  "/billing",
  "/search",
  "/exports",
  "/enrichments",
] as const;

/** The script's and the style sheet's addresses. */
export const SCRIPT_PATH = "/dashboard/app.js";
export const STYLE_PATH = "/dashboard/app.css";

/**
 * The pages' Content-Security-Policy: only this origin's script and style sheet (no inline script
 * or style, no eval), calls to this origin only, never framed.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers of every dashboard answer. */
export const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy": CONTENT_SECURITY_POLICY,
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};

/** The HTML shell: no inline script or style, no data; the script fills `main`. */
export function pageShell(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lead Service dashboard</title>
<link rel="stylesheet" href="${STYLE_PATH}">
<script type="module" src="${SCRIPT_PATH}"></script>
</head>
<body>
<header class="top"><a class="brand" href="/">Lead Service</a><nav id="nav" aria-label="Main"></nav></header>
<main id="main"><p>Loading…</p></main>
<noscript><p>The dashboard needs JavaScript.</p></noscript>
</body>
</html>
`;
}
