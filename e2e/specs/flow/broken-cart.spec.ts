import { randomBytes } from "node:crypto";
import { expect, type Locator, test } from "@playwright/test";
import { waitForVerdict } from "../../support/candidate.ts";
import { fillChangeForm, submitChange } from "../../support/change-form.ts";
import { expectDecision } from "../../support/decision.ts";
import { brokenCartChange } from "./fixtures/broken-cart.ts";

/** An element's computed colours as sRGB (the page may use oklch; a canvas converts it). */
async function rgbColours(el: Locator): Promise<Record<"text" | "background" | "border", [number, number, number]>> {
  return el.evaluate((node) => {
    const style = getComputedStyle(node);
    const ctx = document.createElement("canvas").getContext("2d", { willReadFrequently: true });
    if (!ctx) throw new Error("no 2d canvas");
    const rgb = (css: string): [number, number, number] => {
      ctx.clearRect(0, 0, 1, 1);
      ctx.fillStyle = "#000";
      ctx.fillStyle = css;
      ctx.fillRect(0, 0, 1, 1);
      const [r = 0, g = 0, b = 0] = ctx.getImageData(0, 0, 1, 1).data;
      return [r, g, b];
    };
    return { text: rgb(style.color), background: rgb(style.backgroundColor), border: rgb(style.borderTopColor) };
  });
}

/** Red dominates green and blue (by `margin`), as in a failure, never as in a pass (green). */
const reddish = ([r, g, b]: [number, number, number], margin: number) => r - g >= margin && r - b >= margin;

test("a Change that breaks the cart invariant is rejected, with the failed protected check shown in red", async ({
  page,
}) => {
  // One Agent run and a low-risk verification plus the cart invariant tests.
  test.setTimeout(240_000);
  const projectId = process.env.E2E_DEMO_PROJECT_ID ?? "";
  await page.goto(`/projects/${projectId}/changes/new`);
  await fillChangeForm(page, brokenCartChange(`Bulk discount ${randomBytes(3).toString("hex")}`));
  await submitChange(page, projectId);

  await expect(page.getByTestId("change-terms")).toContainText("Cart totals are never negative");
  await expect(page.getByTestId("task-node-discount")).toHaveAttribute("data-state", "completed", { timeout: 90_000 });
  const link = page.locator('[data-testid^="candidate-link-"]');
  await expect(link).toHaveCount(1, { timeout: 30_000 });
  await link.click();
  await expect(page).toHaveURL(/\/candidates\/[^/]+$/);

  expect(await waitForVerdict(page, 180_000)).toBe("rejected");
  await expect(page.getByTestId("candidate-status-badge")).toHaveAttribute("data-tone", "fail");
  await expect(page.getByTestId("decision-headline")).toHaveText(/^Rejected: /);

  // The invariant put the protected check in the plan; it ran, compiled fine, and failed.
  await expect(page.getByTestId("check-build")).toHaveAttribute("data-gap", "none");
  const check = page.getByTestId("check-protected-invariant-cart");
  await expect(check).toHaveAttribute("data-status", "fail");
  await expect(check).toHaveAttribute("data-gap", "failed");
  // The shop's own checks file put it there, read from the base.
  await expect(check).toContainText(".rhumbatron/checks.yml: an invariant names cart");
  await expect(page.getByTestId("plan-checks-source")).toHaveAttribute("data-source", "file");
  await expect(page.getByTestId("plan-checks-source")).toContainText(".rhumbatron/checks.yml at the base");
  // A reader sees what ran and how its output ended, inline; the full log stays one click away.
  await expect(check.getByTestId("evidence-command").first()).toHaveText("$ npm run -s test:cart:built");
  // Each failing test of its JUnit report, by name with its message, before any passing one.
  await expect(check.getByTestId("evidence-test-failed").first()).toContainText(/holds over seeded|removing every/);
  const tail = check.getByTestId("evidence-output-tail").first();
  await expect(tail).toBeVisible();
  expect(((await tail.textContent()) ?? "").split("\n").length).toBeLessThanOrEqual(40);
  await expect(check.getByTestId("evidence-output").first()).toBeVisible();

  const gap = page.getByTestId("gap-protected-invariant-cart");
  await expect(gap).toHaveAttribute("data-gap-kind", "failed");
  await expect(gap).toContainText("Failed");
  // The gap shows the failure's first lines: the failing invariant test, without scrolling to the log.
  await expect(gap.getByTestId("gap-excerpt-protected-invariant-cart")).toContainText(
    /holds over seeded|removing every/,
  );
  await expect(page.getByTestId("gate-promotable")).toHaveAttribute("data-tone", "fail");

  // Shown as a failure: red text on a red-tinted background with a red border, never green.
  for (const el of [gap, check]) {
    await expect(el).toHaveClass(/\btext-red-\d+/);
    await expect(el).not.toHaveClass(/emerald|green/);
    const colours = await rgbColours(el);
    expect(reddish(colours.text, 60), `text ${colours.text}`).toBe(true);
    expect(reddish(colours.background, 5), `background ${colours.background}`).toBe(true);
    expect(reddish(colours.border, 20), `border ${colours.border}`).toBe(true);
  }

  // The decision comes first: rejected, with the gap and its rule; no Promote is offered.
  const decision = page.getByTestId("decision-header");
  await expect(decision).toHaveAttribute("data-state", "rejected");
  await expect(page.getByTestId("decision-reason").filter({ hasText: "protected-invariant-cart: failed" })).toHaveCount(
    1,
  );
  await expect(page.getByTestId("promote-not-offered")).toBeVisible();
  // The failing check may be rerun (the policy's budget), or the Tasks retried: both from the header.
  await expectDecision(page, {
    state: "rejected",
    headline: /^Rejected: /,
    actions: ["rerun", "retry_tasks"],
    screenshot: "candidate-decision-rejected-by-checks",
  });
  await expect(decision.getByTestId("rerun-protected-invariant-cart")).toBeVisible();

  // The way on is the same everywhere: the decision names it and links to the Change page, whose
  // status says rejected (never "verifying") and which offers to re-run the Task; the project's
  // list of Changes says rejected too. At a laptop's width and at a phone's.
  await expect(decision.getByTestId("decision-reason").filter({ hasText: "retry the Change's Tasks" })).toHaveCount(1);
  const candidateUrl = page.url();
  for (const viewport of [
    { width: 1366, height: 768 },
    { width: 390, height: 844 },
  ]) {
    await page.setViewportSize(viewport);
    await page.goto(candidateUrl);
    await page.getByTestId("decision-header").getByTestId("decision-action-retry_tasks").click();
    await expect(page).toHaveURL(/\/changes\/[^/]+$/);
    const changeId = page.url().split("/").at(-1) ?? "";
    await expect(page.getByTestId("change-status")).toHaveText("rejected");
    await expect(page.getByTestId("change-status-hint")).toContainText("retry the Change's Tasks");
    await expect(page.getByTestId("retry-task-discount")).toBeVisible();
    await page.goto(`/projects/${projectId}`);
    const row = page.locator(`[data-testid="change-row"][data-change-id="${changeId}"]`);
    await expect(row.getByTestId("change-status")).toHaveText("rejected");
  }
});
