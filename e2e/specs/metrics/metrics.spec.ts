import { expect, test } from "@playwright/test";
import { saveScreenshot } from "../../support/screenshots.ts";
import { DEMO_TENANT, trpcData, trpcQuery } from "../../support/trpc.ts";

// Runs after the flows and the landing specs (specs run in path order): their Changes landed (by a
// person and by the landing queue), their checks ran, their Sandboxes were charged, and their
// Events left metric points.

test("the metrics page shows a landing-queue owner's numbers over one window, as bars and steps", async ({ page }) => {
  await page.goto("/metrics");

  await test.step("time to land: how many Changes landed, and request -> landed p50 and p90", async () => {
    await expect(page.getByTestId("landing-metrics")).toHaveAttribute("data-state", "ready");
    expect(Number(await page.getByTestId("landing-count").textContent())).toBeGreaterThan(0);
    for (const id of ["landing-p50", "landing-p90", "queue-landing-p50", "queue-landing-p90"]) {
      await expect(page.getByTestId(id)).toHaveText(/\d+ (ms|s|min|h|d)/);
    }
    await expect(page.getByTestId("landing-metrics").locator(".recharts-bar-rectangle").first()).toBeVisible();
    await expect(page.getByTestId("landing-panel")).toContainText("nearest-rank percentiles");
  });

  await test.step("the landing queue's depth as steps: the landing spec's Changes waited in it", async () => {
    const chart = page.getByTestId("queue-depth-chart");
    await expect(chart).toHaveAttribute("data-state", "ready");
    expect(Number(await chart.getAttribute("data-steps"))).toBeGreaterThan(1);
    expect(Number(await page.getByTestId("queue-depth-peak").textContent())).toBeGreaterThan(0);
    await expect(chart.locator(".recharts-line").first()).toBeVisible();
  });

  await test.step("each check's durations and flake rate, with the definition of flaky on the page", async () => {
    await expect(page.getByTestId("check-metrics")).toHaveAttribute("data-state", "ready");
    const rows = page.getByTestId("check-row");
    expect(await rows.count()).toBeGreaterThan(0);
    await expect(rows.first().getByTestId("check-flake-rate")).toHaveText(/^\d+\.\d%$|^—$/);
    await expect(page.getByTestId("check-durations-chart").locator(".recharts-bar-rectangle").first()).toBeVisible();
    await expect(page.getByTestId("flake-definition")).toContainText("later passed on it");
  });

  await test.step("Sandbox seconds per bucket, stacked by what used them", async () => {
    const chart = page.getByTestId("sandbox-chart");
    await expect(chart).toHaveAttribute("data-state", "ready");
    await expect(chart.locator(".recharts-bar-rectangle").first()).toBeVisible();
  });

  await test.step("the Events chart counts with bars, and no chart on the page draws a curve", async () => {
    const chart = page.getByTestId("metrics-chart");
    await expect(chart).toHaveAttribute("data-state", "ready");
    expect(Number(await chart.getAttribute("data-points"))).toBeGreaterThan(0);
    await expect(chart.locator(".recharts-bar-rectangle").first()).toBeVisible();
    await expect(chart.locator(".recharts-line")).toHaveCount(0);
    const totals = page.getByTestId("metrics-totals").locator('[data-testid^="metric-total-"]');
    expect((await totals.allInnerTexts()).map(Number).some((v) => v > 0)).toBe(true);
    // The page says whether the analytics projector has counted everything yet.
    await expect(page.getByTestId("metrics-lag")).toHaveText(/Analytics are up to date|events?, .* behind/);
    await saveScreenshot(page, "metrics");
  });

  await test.step("one window for every chart: the last 24 hours, per hour", async () => {
    await page.getByTestId("metrics-range").selectOption("24h");
    await page.getByTestId("metrics-bucket").selectOption("hour");
    await expect(page.getByTestId("landing-panel")).toContainText("Time to land, last 24h");
    await expect(page.getByTestId("checks-panel")).toContainText("Checks, last 24h");
    await expect(page.getByTestId("sandbox-panel")).toContainText("Sandbox seconds, last 24h");
    await expect(page.getByTestId("landing-metrics")).toHaveAttribute("data-state", "ready");
  });
});

test("the generation timeline lists who promoted each generation by name, beside a level graph", async ({ page }) => {
  const projects = await trpcData<{ id: string; name: string }[]>(
    await trpcQuery(page.request, "projects.list", { tenantId: DEMO_TENANT }),
  );
  const byQueue = projects.find((p) => p.name.startsWith("landing-three-"));
  const byPerson = projects.find((p) => p.name.startsWith("wishlist-"));
  expect(byQueue, "the landing spec's project").toBeDefined();
  expect(byPerson, "the flow spec's project").toBeDefined();

  await page.goto(`/projects/${byQueue?.id}`);
  const timeline = page.getByTestId("generation-timeline");
  await expect(timeline).toHaveAttribute("data-state", "ready");
  for (const g of [1, 2, 3]) {
    await expect(page.getByTestId(`generation-S${g}`).getByTestId("generation-promoted-by")).toHaveText(
      "the landing queue",
    );
  }
  await expect(page.getByTestId("generation-S0").getByTestId("generation-promoted-by")).toHaveText("provisioning");
  // The line of generations is drawn in the table's rows, one node a row, its labels level: nothing rotated.
  const graph = page.getByTestId("generation-graph");
  await expect(graph.locator("svg text", { hasText: /^S3$/ })).toHaveCount(1);
  await expect(graph.locator('svg [transform*="rotate"]')).toHaveCount(0);
  await saveScreenshot(page, "generation-timeline");

  await page.goto(`/projects/${byPerson?.id}`);
  const s1 = page.getByTestId("generation-S1");
  await expect(s1.getByTestId("generation-promoted-by")).toContainText("Demo Admin");
  await expect(s1.getByTestId("generation-approved-by")).toHaveText("approved by Demo Admin");
  await expect(page.getByTestId("generation-timeline")).not.toContainText("usr_");
});
