/**
 * System Chromium, for the browser check, the setup step and the e2e suite: CHROMIUM_PATH, then the
 * usual system locations. The caller passes how to test a path (fs.existsSync on a real machine).
 */
export const CHROMIUM_CANDIDATES = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome-stable",
  "/usr/bin/google-chrome",
];

export const CHROMIUM_INSTALL_HINT =
  "Chromium was not found. Install it (Debian/Ubuntu: `sudo apt-get install -y chromium`) or set CHROMIUM_PATH to a Chromium or Chrome binary.";

export function findChromium(
  env: Record<string, string | undefined>,
  exists: (path: string) => boolean,
): string | null {
  const configured = env.CHROMIUM_PATH;
  if (configured) return exists(configured) ? configured : null;
  return CHROMIUM_CANDIDATES.find((p) => exists(p)) ?? null;
}

/** Flags for a headless Chromium on a machine without network or GPU. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

/**
 * The browser check's flags: every request is answered or aborted by request interception;
 * resolving no host name at all is a second wall behind it (prefetch and preconnect hints never
 * reach the route handler).
 */
export const BROWSER_CHECK_ARGS = [...CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND"];
