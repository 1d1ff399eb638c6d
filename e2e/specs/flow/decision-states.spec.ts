import { expect, type Page, test } from "@playwright/test";
import { saveScreenshot } from "../../support/screenshots.ts";
import {
  candidatesOf,
  createChange,
  overview,
  provisionedProject,
  waitUntil,
  writeTask,
} from "../landing/fixtures/landing-api.ts";
import {
  type CandidateView,
  cancelChange,
  candidateView,
  projectPolicy,
  promote,
  updatePolicy,
  waitingTestTask,
} from "./fixtures/decision-api.ts";

/**
 * The Candidate page's decision header in the states the other flow specs do not reach:
 * verifying (checks still running) then cancelled with its Change, and blocked (a promotion refused
 * because the policy changed after the plan was made). Through the real product: web and worker as
 * processes, real Postgres and git, the scripted agent and the template's own checks in the Sandbox.
 * Each test has a project of its own; its low-risk Changes need no approver and never land by
 * themselves (landWhenReady false), so only what the test does moves them.
 */

/** One outer limit for provisioning, the Agent run and the verification up to the state looked at. */
const VERIFY_LIMIT = 360_000;
/** The page follows an API action (it refreshes itself every 2 s while the Candidate is not settled). */
const PAGE_LIMIT = 30_000;

/** The state a stuck wait can never leave (the scripted Change should have been verified). */
const notVerifying = (c: CandidateView | null) =>
  c && !["created", "verifying"].includes(c.status)
    ? `the Candidate is ${c.status}: ${JSON.stringify(c.decision)}`
    : null;

/** The newest Candidate of the Change, with its plan, Evidence and decision (null until one is composed). */
async function newestCandidate(page: Page, changeId: string): Promise<CandidateView | null> {
  const [row] = await candidatesOf(page.request, changeId);
  return row ? candidateView(page.request, row.id) : null;
}

test("a verified low-risk Candidate whose promotion is refused after a policy edit shows blocked, with the reason and no Promote", async ({
  page,
}) => {
  test.setTimeout(VERIFY_LIMIT + 120_000);
  const api = page.request;
  const projectId = await provisionedProject(api, "decision-blocked");
  const changeId = await createChange(api, projectId, {
    title: "Add src/decision-blocked.ts",
    tasks: [writeTask("a", "src/decision-blocked.ts", "export const decisionBlocked = true;\n")],
    land: false,
  });

  const candidate =
    await test.step("the Candidate is verified under the policy's first version, ready to promote", async () => {
      const c = await waitUntil(
        "the Candidate verified",
        () => newestCandidate(page, changeId),
        (c) => c?.status === "verified",
        VERIFY_LIMIT,
        notVerifying,
      );
      if (!c?.plan) throw new Error(`e2e: the verified Candidate has no plan: ${JSON.stringify(c)}`);
      expect(c.approval).toMatchObject({ required: false, state: "not_required" });
      expect(c.decision).toMatchObject({ state: "ready_to_promote", actions: ["promote"] });
      await page.goto(`/projects/${projectId}/candidates/${c.id}`);
      await expect(page.getByTestId("decision-header")).toHaveAttribute("data-state", "ready_to_promote");
      await expect(page.getByTestId("decision-action-promote")).toBeVisible();
      return { id: c.id, plan: c.plan };
    });

  const block = await test.step("an admin edits the project's policy; the promotion is then refused", async () => {
    const before = await projectPolicy(api, projectId);
    expect(before.version).toBe(candidate.plan.policyVersion);
    const budget = before.document.rerunBudget;
    const edited = await updatePolicy(
      api,
      projectId,
      { ...before.document, rerunBudget: budget > 0 ? budget - 1 : 1 },
      before.version,
    );
    expect(edited).toMatchObject({ changed: true, version: before.version + 1, changedFields: ["rerunBudget"] });

    const block = `the plan used ${candidate.plan.policyId} v${candidate.plan.policyVersion}, the active policy is ${before.policyId} v${edited.version}`;
    expect(await promote(api, candidate.id)).toEqual({ outcome: "blocked", blocks: [block] });
    // Nothing moved: the Candidate stays verified and main stays at S0.
    expect((await candidateView(api, candidate.id)).status).toBe("verified");
    expect((await overview(api, projectId)).project.canonicalGeneration).toBe(0);
    return block;
  });

  await test.step("the page shows blocked first, naming the block, and offers no Promote", async () => {
    await page.reload();
    const header = page.getByTestId("decision-header");
    await expect(header).toHaveAttribute("data-state", "blocked", { timeout: PAGE_LIMIT });
    await expect(page.getByTestId("candidate-status")).toHaveAttribute("data-status", "verified");
    await expect(page.getByTestId("decision-headline")).toHaveText("Blocked: promotion would be refused now");
    await expect(header.getByTestId("decision-reason")).toHaveText([block]);
    await expect(header.locator('[data-testid^="decision-action-"]')).toHaveCount(0);
    await expect(page.getByTestId("promote-button")).toHaveCount(0);
    await expect(page.getByTestId("promote-not-offered")).toContainText("promotion would be refused now");
    await saveScreenshot(page, "candidate-decision-blocked");
  });
});

test("a Candidate whose checks are still running shows verifying, naming the check it waits for; cancelled with its Change, it shows cancelled", async ({
  page,
}) => {
  test.setTimeout(VERIFY_LIMIT + 120_000);
  const api = page.request;
  const projectId = await provisionedProject(api, "decision-verifying");
  const changeId = await createChange(api, projectId, {
    title: "Add a test that waits",
    tasks: [waitingTestTask("wait")],
    land: false,
  });

  const candidateId =
    await test.step("through the API: the Candidate is verifying, build recorded, targeted running", async () => {
      // targeted runs the test that waits, so from here it stays unrecorded until its timeout (minutes).
      const c = await waitUntil(
        "the Candidate verifying with build recorded",
        () => newestCandidate(page, changeId),
        (c) => c?.status === "verifying" && c.evidence.some((e) => e.checkId === "build"),
        VERIFY_LIMIT,
        notVerifying,
      );
      if (!c) throw new Error("e2e: no Candidate");
      expect(c.plan?.checks.map((k) => k.id)).toEqual(["build", "targeted"]);
      expect(c.evidence.map((e) => [e.checkId, e.status])).toEqual([["build", "pass"]]);
      return c.id;
    });

  await test.step("the page shows verifying, waiting for targeted, with no action", async () => {
    await page.goto(`/projects/${projectId}/candidates/${candidateId}`);
    const header = page.getByTestId("decision-header");
    await expect(header).toHaveAttribute("data-state", "verifying");
    await expect(page.getByTestId("candidate-status")).toHaveAttribute("data-status", "verifying");
    await expect(page.getByTestId("decision-headline")).toHaveText("Waiting for checks: targeted");
    await expect(header.getByTestId("decision-reason")).toHaveCount(0);
    await expect(header.locator('[data-testid^="decision-action-"]')).toHaveCount(0);
    await expect(page.getByTestId("promote-button")).toHaveCount(0);
    await expect(page.getByTestId("approve-button")).toHaveCount(0);
    await expect(page.getByTestId("candidate-live")).toBeVisible();
    // The Gate says the check is still running, not that its Evidence is missing, and is not red.
    await expect(page.getByTestId("gate-promotable")).toHaveText("1 check still running");
    await expect(page.getByTestId("gate-promotable")).toHaveAttribute("data-tone", "pending");
    await expect(page.getByTestId("gap-targeted")).toHaveAttribute("data-gap-kind", "running");
    await saveScreenshot(page, "candidate-decision-verifying");
  });

  await test.step("the Change is cancelled through the API; the page turns cancelled, with no action", async () => {
    const cancelled = await cancelChange(api, changeId, "e2e: the decision header was seen while verifying");
    expect(cancelled).toEqual({ cancelled: true, candidates: [candidateId] });
    const header = page.getByTestId("decision-header");
    // The page is still refreshing itself (verifying is not settled): no reload needed.
    await expect(header).toHaveAttribute("data-state", "cancelled", { timeout: PAGE_LIMIT });
    await expect(page.getByTestId("candidate-status")).toHaveAttribute("data-status", "cancelled");
    await expect(page.getByTestId("decision-headline")).toHaveText("Cancelled with its Change");
    await expect(header.locator('[data-testid^="decision-action-"]')).toHaveCount(0);
    await expect(page.getByTestId("candidate-live")).toHaveCount(0);

    // And so it stays, read afresh.
    await page.reload();
    await expect(header).toHaveAttribute("data-state", "cancelled", { timeout: PAGE_LIMIT });
    await expect(header.locator('[data-testid^="decision-action-"]')).toHaveCount(0);
    expect((await candidateView(api, candidateId)).decision).toEqual({
      state: "cancelled",
      headline: "Cancelled with its Change",
      reasons: [],
      actions: [],
    });
    await saveScreenshot(page, "candidate-decision-cancelled");
  });
});
