import { expect, type Page, test } from "@playwright/test";
import { expectDecision } from "../../support/decision.ts";
import {
  candidatesOf,
  createChange,
  landingQueue,
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
      await expectDecision(page, {
        state: "ready_to_promote",
        headline: "Ready to promote: every required check passed; no approval needed",
        actions: ["promote"],
        screenshot: "candidate-decision-ready-to-promote",
      });
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
    await expect(page.getByTestId("promote-not-offered")).toContainText("promotion would be refused now");
    await expectDecision(page, {
      state: "blocked",
      headline: "Blocked: promotion would be refused now",
      actions: [],
      screenshot: "candidate-decision-blocked",
    });
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
    await expect(page.getByTestId("candidate-live")).toBeVisible();
    // The Gate says the check is still running, not that its Evidence is missing, and is not red.
    await expect(page.getByTestId("gate-promotable")).toHaveText("1 check still running");
    await expect(page.getByTestId("gate-promotable")).toHaveAttribute("data-tone", "pending");
    await expect(page.getByTestId("gap-targeted")).toHaveAttribute("data-gap-kind", "running");
    await expectDecision(page, {
      state: "verifying",
      headline: "Waiting for checks: targeted",
      actions: [],
      screenshot: "candidate-decision-verifying",
    });
  });

  await test.step("the Change is cancelled through the API; the page turns cancelled, with no action", async () => {
    const cancelled = await cancelChange(api, changeId, "e2e: the decision header was seen while verifying");
    expect(cancelled).toEqual({ cancelled: true, candidates: [candidateId] });
    const header = page.getByTestId("decision-header");
    // The page is still refreshing itself (verifying is not settled): no reload needed.
    await expect(header).toHaveAttribute("data-state", "cancelled", { timeout: PAGE_LIMIT });
    await expect(page.getByTestId("candidate-status")).toHaveAttribute("data-status", "cancelled");
    await expect(page.getByTestId("decision-headline")).toHaveText("Cancelled with its Change");
    await expect(page.getByTestId("candidate-live")).toHaveCount(0);

    // And so it stays, read afresh.
    await expectDecision(page, {
      state: "cancelled",
      headline: "Cancelled with its Change",
      actions: [],
      screenshot: "candidate-decision-cancelled",
    });
    expect((await candidateView(api, candidateId)).decision).toEqual({
      state: "cancelled",
      headline: "Cancelled with its Change",
      reasons: [],
      actions: [],
    });
  });
});

/** Runs in the page: notes whether a Promote button was ever in the document, from now on. */
function watchForPromoteButton() {
  const w = window as unknown as { e2ePromoteSeen?: boolean };
  w.e2ePromoteSeen = document.querySelector('[data-testid="promote-button"]') !== null;
  new MutationObserver(() => {
    if (document.querySelector('[data-testid="promote-button"]')) w.e2ePromoteSeen = true;
  }).observe(document.body, { subtree: true, childList: true });
}

test("an approver's decisions from the header: a rejected tree says so once; an approved Change that lands when ready is promoted by the queue with no Promote button", async ({
  page,
}) => {
  test.setTimeout(2 * VERIFY_LIMIT + 120_000);
  const api = page.request;
  const projectId = await provisionedProject(api, "decision-approver");
  // This project asks a person to approve low-risk Changes too.
  const policy = await projectPolicy(api, projectId);
  await updatePolicy(
    api,
    projectId,
    { ...policy.document, humanGateRiskTiers: ["low", "high", "critical"] },
    policy.version,
  );

  const verifiedCandidate = (changeId: string) =>
    waitUntil(
      "the Candidate verified, waiting for a person",
      () => newestCandidate(page, changeId),
      (c) => c?.status === "verified",
      VERIFY_LIMIT,
      notVerifying,
    );

  const rejected =
    await test.step("a Candidate waiting for a person: approve and reject in the header, nothing else", async () => {
      const changeId = await createChange(api, projectId, {
        title: "Add src/decision-rejected.ts",
        tasks: [writeTask("a", "src/decision-rejected.ts", "export const rejectedByAPerson = true;\n")],
        land: false,
      });
      const c = await verifiedCandidate(changeId);
      await page.goto(`/projects/${projectId}/candidates/${c?.id}`);
      await expectDecision(page, {
        state: "ready_to_approve",
        headline: "Ready to approve: every required check passed",
        actions: ["approve", "reject"],
        screenshot: "candidate-decision-ready-to-approve",
      });
      await expect(page.getByTestId("candidate-title")).toHaveText("Add src/decision-rejected.ts");
      // The rule that asks for a person is named, and the Promotion panel says what it waits for.
      await expect(page.getByTestId("decision-reason")).toHaveText([
        `a person approves this exact tree: ${policy.policyId} gates low risk`,
      ]);
      await expect(page.getByTestId("promote-not-offered")).toHaveText(
        "Not promoted yet: it waits for a person to approve this exact tree (at the top of the page)",
      );

      const header = page.getByTestId("decision-header");
      await header.getByTestId("reject-note").fill("e2e: not this tree");
      await header.getByTestId("reject-button").click();
      await expect(header).toHaveAttribute("data-state", "rejected", { timeout: PAGE_LIMIT });
      await expectDecision(page, {
        state: "rejected",
        headline: "Rejected: approval rejected: e2e: not this tree",
        actions: ["retry_tasks"],
        screenshot: "candidate-decision-rejected-by-a-person",
      });
      await expect(page.getByTestId("approval-state")).toHaveText("rejected");
      return { changeId, candidateId: c?.id ?? "" };
    });

  await test.step("approved, its Change landing when ready: the queue promotes it and no Promote button ever shows", async () => {
    const changeId = await createChange(api, projectId, {
      title: "Add src/decision-landed.ts",
      tasks: [writeTask("a", "src/decision-landed.ts", "export const landedByTheQueue = true;\n")],
      land: true,
    });
    const c = await verifiedCandidate(changeId);
    await page.goto(`/projects/${projectId}/candidates/${c?.id}`);
    const header = page.getByTestId("decision-header");
    await expect(header).toHaveAttribute("data-state", "ready_to_approve");
    await expect(header.getByTestId("decision-reason").last()).toHaveText(
      "once approved, the landing queue promotes it (its Change lands when ready)",
    );
    await page.evaluate(watchForPromoteButton);
    await header.getByTestId("approve-button").click();
    await waitUntil(
      "the approved Candidate promoted by the landing queue",
      async () => ({ candidate: await candidateView(api, c?.id ?? ""), queue: await landingQueue(api, projectId) }),
      (s) => s.candidate.status === "promoted",
      VERIFY_LIMIT,
      (s) => {
        const entry = s.queue.find((e) => e.changeId === changeId);
        return entry && entry.waitingFor !== "landing" && entry.waitingFor !== "approval"
          ? `${entry.waitingFor}: ${entry.detail}`
          : null;
      },
    );
    await expect(header).toHaveAttribute("data-state", "promoted", { timeout: PAGE_LIMIT });
    expect(await page.evaluate(() => (window as unknown as { e2ePromoteSeen?: boolean }).e2ePromoteSeen)).toBe(false);
    await expectDecision(page, {
      state: "promoted",
      headline: "Promoted as generation 1 by the landing queue",
      actions: [],
      screenshot: "candidate-decision-promoted",
    });
    // The time is said once, in the reader's own words, never as a raw ISO string.
    await expect(page.getByTestId("decision-promoted-at")).not.toHaveText(/\d{4}-\d\d-\d\dT/);
    await expect(page.getByTestId("candidate-promotion")).not.toContainText(/\d{4}-\d\d-\d\dT\d\d:/);
  });

  await test.step("the rejected Candidate, its base moved on by that promotion, still shows the way on", async () => {
    await page.goto(`/projects/${projectId}/candidates/${rejected.candidateId}`);
    await expectDecision(page, {
      state: "rejected",
      headline: "Rejected: approval rejected: e2e: not this tree",
      actions: ["retry_tasks"],
      screenshot: "candidate-decision-rejected-moved-base",
    });
    await page.getByTestId("decision-header").getByTestId("decision-action-retry_tasks").click();
    await expect(page).toHaveURL(`/projects/${projectId}/changes/${rejected.changeId}`);
    await expect(page.getByTestId("change-status")).toHaveText("rejected");
    await expect(page.getByTestId("retry-task-a")).toBeVisible();
  });
});

test("a Change whose Task changes nothing: its page says the Candidate changes no file, not that a patch is missing", async ({
  page,
}) => {
  test.setTimeout(VERIFY_LIMIT + 120_000);
  const api = page.request;
  const projectId = await provisionedProject(api, "decision-empty");
  // The template's .gitignore, written again as it is: the Task's diff is empty.
  const changeId = await createChange(api, projectId, {
    title: "Write .gitignore as it is",
    tasks: [writeTask("a", ".gitignore", "dist/\nnode_modules/\n")],
    land: false,
  });
  const c = await waitUntil(
    "the Candidate judged",
    () => newestCandidate(page, changeId),
    (c) => c !== null && !["created", "verifying"].includes(c.status),
    VERIFY_LIMIT,
  );
  await page.goto(`/projects/${projectId}/candidates/${c?.id}`);
  await expect(page.getByTestId("changeset-row").getByTestId("changeset-empty")).toHaveText("changes no file");
  const patch = page.getByTestId("candidate-patch");
  await expect(patch).toHaveAttribute("data-state", "empty");
  await expect(patch).toContainText("the composed tree is the base's tree");
  await expect(page.getByTestId("candidate-composition")).not.toContainText("Patch not stored");
});
