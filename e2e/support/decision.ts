import { expect, type Page, test } from "@playwright/test";
import type { DecisionAction, DecisionState } from "@rhumbatron/core";
import { hydrated } from "./hydrated.ts";
import { saveScreenshot } from "./screenshots.ts";

/**
 * The Candidate page in one state, as an approver reads it: the decision header's headline, the
 * header as the one place the actions are (each offered control once, inside it; every other one
 * nowhere on the page), and no label elsewhere on the page that says another state. Checked at a
 * laptop's 1366 x 768 and a phone's 390 x 844: the header starts on the first screen, the first
 * action is on it at 1366, and the page never scrolls sideways. The server's HTML already holds the
 * decision (no "Loading…" first paint).
 */

/** The controls the header offers, one per action the decision lists. */
export type ActionControl = DecisionAction;

const CONTROL_TEST_ID: Record<ActionControl, string> = {
  approve: "approve-button",
  reject: "reject-button",
  promote: "promote-button",
  rerun: "decision-action-rerun",
  retry_tasks: "decision-action-retry_tasks",
};

/** The Candidate statuses each decision state may show beside it. */
const STATUSES: Record<DecisionState, string[]> = {
  verifying: ["created", "verifying"],
  ready_to_approve: ["verified"],
  ready_to_promote: ["verified"],
  blocked: ["verified"],
  rejected: ["rejected"],
  promoted: ["promoted"],
  stale: ["stale"],
  cancelled: ["cancelled"],
};

/** The approval badge values that would contradict the state. */
const APPROVAL_NOT: Partial<Record<DecisionState, string[]>> = {
  ready_to_approve: ["granted", "rejected", "not required", "closed"],
  rejected: ["pending"],
  stale: ["pending"],
  cancelled: ["pending"],
  promoted: ["pending", "rejected"],
};

export interface DecisionExpectation {
  state: DecisionState;
  headline: string | RegExp;
  /** The controls offered; every other one must be absent from the whole page. */
  actions: ActionControl[];
  /** Saved as <name>-1366.png and <name>-390.png. */
  screenshot?: string;
}

const VIEWPORTS = [
  { name: "1366", width: 1366, height: 768 },
  { name: "390", width: 390, height: 844 },
] as const;

/** Checks the page as it is now (reloaded at each width), then puts the viewport back. */
export async function expectDecision(page: Page, want: DecisionExpectation): Promise<void> {
  const before = page.viewportSize();
  await test.step(`the Candidate page reads ${want.state}, at 1366 px and 390 px`, async () => {
    // Rendered on the server: the first paint (the HTML itself, before any script) holds the decision.
    const html = await (await page.request.get(page.url())).text();
    expect(html, "the server-rendered page").toMatch(
      new RegExp(`data-testid="decision-header"[^>]*data-state="${want.state}"`),
    );
    expect(html).not.toContain("Loading the Candidate");
    for (const vp of VIEWPORTS) {
      await page.setViewportSize({ width: vp.width, height: vp.height });
      await page.reload();
      // The actions are server-rendered: they answer a click once React has taken over.
      await hydrated(page);
      await expectOneWidth(page, want, vp);
      if (want.screenshot) await saveScreenshot(page, `${want.screenshot}-${vp.name}`);
    }
  });
  if (before) await page.setViewportSize(before);
}

async function expectOneWidth(page: Page, want: DecisionExpectation, vp: (typeof VIEWPORTS)[number]) {
  const at = `at ${vp.width} px`;
  const header = page.getByTestId("decision-header");
  await expect(header, at).toHaveAttribute("data-state", want.state);
  await expect(page.getByTestId("decision-headline"), at).toHaveText(want.headline);

  // The one place the actions are.
  for (const [action, testId] of Object.entries(CONTROL_TEST_ID) as [ActionControl, string][]) {
    const offered = want.actions.includes(action);
    await expect(page.getByTestId(testId), `${action} on the page ${at}`).toHaveCount(offered ? 1 : 0);
    if (offered) await expect(header.getByTestId(testId), `${action} inside the header ${at}`).toHaveCount(1);
  }
  if (want.actions.length === 0) await expect(page.getByTestId("decision-actions"), at).toHaveCount(0);

  // No label that says another state.
  const status = (await page.getByTestId("candidate-status").getAttribute("data-status")) ?? "";
  expect(STATUSES[want.state], `the status badge says ${status} ${at}`).toContain(status);
  // Live while checks run; a Candidate the landing queue is about to promote is followed live too.
  if (want.state !== "ready_to_promote") {
    const live = want.state === "verifying";
    await expect(page.getByTestId("candidate-live"), `the live marker ${at}`).toHaveCount(live ? 1 : 0);
  }
  const gate = page.getByTestId("gate-promotable");
  if ((await gate.count()) > 0 && want.state !== "ready_to_promote") {
    await expect(gate, `only a Candidate ready to promote is called promotable ${at}`).not.toHaveText("promotable");
  }
  const approval = (await page.getByTestId("approval-state").textContent())?.trim() ?? "";
  expect(APPROVAL_NOT[want.state] ?? [], `the approval badge says ${approval} ${at}`).not.toContain(approval);
  if (want.state !== "promoted") await expect(page.getByTestId("promotion-record"), at).toHaveCount(0);
  if (want.state === "rejected") {
    // The rejection is said once, in the header.
    const why = ((await page.getByTestId("decision-headline").textContent()) ?? "").trim();
    await expect(page.getByText(why, { exact: true }), `"${why}" shown once ${at}`).toHaveCount(1);
  }

  // Where it sits: the decision starts on the first screen; at 1366 the first action is on it too.
  const box = await header.boundingBox();
  expect(box && box.y < vp.height, `the decision header starts on the first screen ${at}`).toBe(true);
  const first = want.actions[0];
  if (vp.width === 1366 && first) {
    await expect(page.getByTestId(CONTROL_TEST_ID[first]), `${first} on the first screen ${at}`).toBeInViewport();
  }
  const overflow = await page.evaluate(() => {
    const by = document.documentElement.scrollWidth - window.innerWidth;
    // The outermost elements that reach past the right edge, to name in the failure.
    const past = [...document.body.querySelectorAll("*")].filter(
      (el) => el.getBoundingClientRect().right > window.innerWidth + 1,
    );
    const names = past
      .filter((el) => !past.includes(el.parentElement as Element))
      .slice(0, 5)
      .map(
        (el) =>
          `${el.tagName.toLowerCase()}${el.getAttribute("data-testid") ? `[${el.getAttribute("data-testid")}]` : ""}`,
      );
    return { by, names };
  });
  expect(
    overflow.by,
    `the page scrolls sideways by ${overflow.by} px ${at}: ${overflow.names.join(", ")}`,
  ).toBeLessThanOrEqual(0);
}
