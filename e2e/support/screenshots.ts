import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "@playwright/test";

/**
 * Screenshots of the main pages, kept as test artifacts (README.md, Test it). They live under the
 * run's output folder, which Playwright empties at the start of each run.
 */
export const SCREENSHOT_DIR = fileURLToPath(new URL("../../.data/test-results/e2e/screenshots/", import.meta.url));

export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
