import { expect, test } from "@playwright/test";
import { saveScreenshot } from "../../support/screenshots.ts";
import {
  candidatesOf,
  createChange,
  landingQueue,
  mainFiles,
  provisionedProject,
  waitForPromoted,
  waitUntil,
  writeTask,
} from "./fixtures/landing-api.ts";

/**
 * A speculative stack and the queue controls from the project page (docs/landing.md), on the real
 * product: web and worker as processes, real Postgres, git and Sandbox, the template's own checks.
 * An admin pauses the queue with the page's button; two Changes verify, the second on the first's
 * composed tree, and the panel says so; Drain lands what was verifying and holds what starts
 * after; Resume lands the rest.
 */
const LIMIT = 360_000;
const FOLLOW_LIMIT = 60_000;

test("the stack shows in the landing queue panel while it verifies; pause, drain and resume work from the page", async ({
  page,
}) => {
  test.setTimeout(LIMIT * 2 + 120_000);
  const api = page.request;
  const projectId = await provisionedProject(api, "landing-stack");
  const state = page.getByTestId("landing-queue-state");

  await page.goto(`/projects/${projectId}`);
  await expect(state).toHaveAttribute("data-state", "running");
  await page.getByTestId("landing-queue-pause").click();
  await expect(state).toHaveAttribute("data-state", "paused");
  await expect(state).toContainText("Paused: nothing lands until an admin resumes it.");

  const change = (name: string) =>
    createChange(api, projectId, {
      title: `Add src/stack-${name}.ts`,
      tasks: [writeTask("a", `src/stack-${name}.ts`, `export const ${name} = 1;\n`)],
      land: true,
    });
  const first = await change("first");
  // The second Change's Candidate is composed on the first's once that one is composed.
  await waitUntil(
    "the first Change's Candidate composed",
    () => candidatesOf(api, first),
    (cs) => cs[0]?.status === "verifying" || cs[0]?.status === "verified",
    LIMIT,
    (cs) => (cs[0]?.status === "rejected" ? `rejected: ${cs[0].rejectionReason}` : null),
  );
  const second = await change("second");

  await test.step("the panel shows the second Change stacked on the first while they verify", async () => {
    const entry = page.locator(`[data-testid="landing-entry"][data-change-id="${second}"]`);
    const on = entry.getByTestId("landing-stacked-on");
    await expect(on).toHaveAttribute("data-stacked-on", first, { timeout: LIMIT });
    await expect(on).toContainText("stacked on Add src/stack-first.ts");
    await saveScreenshot(page, "landing-queue-stack");
    const queue = await landingQueue(api, projectId);
    expect(queue.find((e) => e.changeId === second)?.stackedOn).toMatchObject({ changeId: first });
    // Nothing lands while paused, however ready.
    await waitUntil(
      "both verified and held",
      () => landingQueue(api, projectId),
      (q) =>
        q.some((e) => e.changeId === first && e.waitingFor === "paused") &&
        q.some((e) => e.changeId === second && e.waitingFor === "stack"),
      LIMIT,
    );
    await expect(page.locator(`[data-testid="landing-entry"][data-change-id="${first}"]`)).toHaveAttribute(
      "data-waiting-for",
      "paused",
    );
  });

  await test.step("Drain lands what was verifying when it began, the stack in order", async () => {
    await page.getByTestId("landing-queue-drain").click();
    await expect(state).toHaveAttribute("data-state", "draining");
    await waitForPromoted(api, projectId, [first, second], LIMIT);
  });

  const third = await test.step("a Change that starts while the queue drains is verified and held", async () => {
    const third = await change("third");
    await waitUntil(
      "the third verified and held by the drain",
      () => landingQueue(api, projectId),
      (q) => q.some((e) => e.changeId === third && e.waitingFor === "paused" && e.detail.includes("drains")),
      LIMIT,
    );
    await expect(page.locator(`[data-testid="landing-entry"][data-change-id="${third}"]`)).toHaveAttribute(
      "data-waiting-for",
      "paused",
      { timeout: 15_000 },
    );
    return third;
  });

  await test.step("Resume lands it, and main holds all three", async () => {
    await page.getByTestId("landing-queue-resume").click();
    await expect(state).toHaveAttribute("data-state", "running");
    await waitForPromoted(api, projectId, [third], LIMIT);
    const files = await mainFiles(
      api,
      projectId,
      ["first", "second", "third"].map((n) => `src/stack-${n}.ts`),
      FOLLOW_LIMIT,
    );
    expect(Object.keys(files).sort()).toEqual(["src/stack-first.ts", "src/stack-second.ts", "src/stack-third.ts"]);
    await expect(page.getByTestId("landing-queue")).toHaveAttribute("data-state", "empty", { timeout: 15_000 });
  });
});
