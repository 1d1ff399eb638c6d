import { expect, test } from "@playwright/test";
import { saveScreenshot } from "../../support/screenshots.ts";

// Runs after the flows (specs run in path order): their Changes, Tasks and Candidates left metric points.
test("the metrics page charts the tenant's events over time, with a total per metric", async ({ page }) => {
  await page.goto("/metrics");
  const chart = page.getByTestId("metrics-chart");
  await expect(chart).toHaveAttribute("data-state", "ready");
  expect(Number(await chart.getAttribute("data-points"))).toBeGreaterThan(0);
  await expect(chart.locator(".recharts-line").first()).toBeVisible();
  const totals = page.getByTestId("metrics-totals").locator('[data-testid^="metric-total-"]');
  expect(await totals.count()).toBeGreaterThan(0);
  const values = (await totals.allInnerTexts()).map(Number);
  expect(values.some((v) => v > 0)).toBe(true);
  // The page says whether the analytics projector has counted everything yet.
  await expect(page.getByTestId("metrics-lag")).toHaveText(/Analytics are up to date|events?, .* behind/);
  await saveScreenshot(page, "metrics");
});
