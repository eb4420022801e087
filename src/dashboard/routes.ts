import { Router, type Response } from "express";
import { loadDashboardScript, loadDashboardStyle } from "./bundle.js";
import { PAGE_PATHS, pageShell, SCRIPT_PATH, SECURITY_HEADERS, STYLE_PATH } from "./page.js";

/**
 * The dashboard (docs/dashboard.md): the same HTML shell at each page's path, the script bundled
 * from `client/` and the style sheet, each with the security headers (strict CSP, never framed).
 * The pages call the contract's operations with the session cookie; nothing here reads data.
 */
export function dashboardRoutes(): Router {
  const router = Router();
  const shell = pageShell();
  let script: Promise<string> | undefined;
  let style: string | undefined;
  const secure = (res: Response) => res.set(SECURITY_HEADERS);
  for (const path of PAGE_PATHS) {
    router.get(path, (_req, res) => {
      secure(res).type("html").send(shell);
    });
  }
  router.get(SCRIPT_PATH, async (_req, res, next) => {
    try {
      script ??= loadDashboardScript();
      const text = await script.catch((err: unknown) => {
        script = undefined;
        throw err;
      });
      secure(res).type("application/javascript").send(text);
    } catch (err) {
      next(err);
    }
  });
  router.get(STYLE_PATH, (_req, res) => {
    style ??= loadDashboardStyle();
    secure(res).type("text/css").send(style);
  });
  return router;
}
