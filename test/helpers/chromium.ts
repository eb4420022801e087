/** Debian's Chromium package, driven by playwright-core (never a downloaded browser). */
export const CHROMIUM = "/usr/bin/chromium";
