import { expect, type Page } from "@playwright/test";

/** Statuses after which the verification workflow changes nothing more by itself. */
const FINAL = ["verified", "rejected", "stale", "promoted"];

/**
 * Waits on the Candidate page (which refreshes itself while verifying) until the Candidate has a
 * final status, and returns it. Verification runs real builds and Chromium in the Sandbox.
 */
export async function waitForVerdict(page: Page, timeoutMs: number): Promise<string> {
  const status = page.getByTestId("candidate-status");
  await expect
    .poll(async () => (await status.getAttribute("data-status")) ?? "", {
      timeout: timeoutMs,
      intervals: [1_000],
      message: "the Candidate should reach a final status",
    })
    .toMatch(new RegExp(`^(${FINAL.join("|")})$`));
  return (await status.getAttribute("data-status")) ?? "";
}

/** What the page says went wrong: the decision and every gap (for assertion messages). */
export async function verdictSummary(page: Page): Promise<string> {
  const rejection = await page.getByTestId("decision-headline").allInnerTexts();
  const gaps = await page.locator('[data-testid^="gap-"]').allInnerTexts();
  return [...rejection, ...gaps].join(" | ");
}
