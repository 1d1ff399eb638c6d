import { expect, type Page } from "@playwright/test";

/**
 * Waits until React has hydrated the page (apps/web/src/components/hydrated-mark.tsx): what is
 * typed into a server-rendered form before that is reset when its state takes over.
 */
export async function hydrated(page: Page): Promise<void> {
  await expect(page.locator("html")).toHaveAttribute("data-hydrated", "true", { timeout: 30_000 });
}
