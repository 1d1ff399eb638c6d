import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, test } from "@playwright/test";
import { verdictSummary, waitForVerdict } from "../../support/candidate.ts";
import { fillChangeForm, submitChange } from "../../support/change-form.ts";
import { expectDecision } from "../../support/decision.ts";
import { hydrated } from "../../support/hydrated.ts";
import { saveScreenshot } from "../../support/screenshots.ts";
import { DEMO_TENANT, trpcData, trpcQuery } from "../../support/trpc.ts";
import { WISHLIST_LINK, WISHLIST_PAGE, wishlistPageChange } from "./fixtures/wishlist-page.ts";

const run = promisify(execFile);

interface TaskStateWindow {
  e2eTaskStates?: Record<string, string[]>;
}

/** Runs in the page: keeps, per `task-node-<key>`, the distinct data-state values it showed, in order. */
function recordTaskStates() {
  const seen: Record<string, string[]> = {};
  const note = (el: Element) => {
    const id = el.getAttribute("data-testid") ?? "";
    if (!id.startsWith("task-node-")) return;
    const state = el.getAttribute("data-state") ?? "";
    seen[id] ??= [];
    if (seen[id].at(-1) !== state) seen[id].push(state);
  };
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "attributes" && r.target instanceof Element) note(r.target);
      for (const n of r.addedNodes) {
        if (!(n instanceof Element)) continue;
        note(n);
        for (const el of n.querySelectorAll('[data-testid^="task-node-"]')) note(el);
      }
    }
  }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-state"] });
  (window as unknown as TaskStateWindow).e2eTaskStates = seen;
}

/** The checks policy-1 requires at high risk (docs/verification.md, Which checks run). */
const HIGH_RISK_CHECKS = ["build", "targeted", "contract", "security", "browser"];

test("a Change goes from the new-Change form through live Agents, verification, approval and promotion to a clone", async ({
  page,
}) => {
  // Provisioning, three Agent runs and a high-risk verification (tsc, tests, Chromium in the Sandbox).
  test.setTimeout(300_000);
  const name = `wishlist-${randomBytes(3).toString("hex")}`;

  await test.step("create a project from the home page and wait until the worker has provisioned it", async () => {
    await page.goto("/");
    await hydrated(page);
    const form = page.getByTestId("create-project-form");
    await form.getByTestId("project-name-input").fill(name);
    await form.getByTestId("create-project-submit").click();
    const row = page.getByTestId("project-row").filter({ hasText: name });
    await expect(row).toHaveAttribute("data-status", /provisioning|active/);
    // The list refreshes itself while a project provisions: no reload.
    await expect(row).toHaveAttribute("data-status", "active", { timeout: 60_000 });
    await expect(row.getByTestId("project-generation")).toHaveText("S0");
    await saveScreenshot(page, "projects");
    await row.getByTestId("project-link").click();
  });
  await expect(page).toHaveURL(/\/projects\/proj_[^/]+$/);
  const projectId = new URL(page.url()).pathname.split("/")[2] ?? "";
  await expect(page.getByTestId("project-overview")).toHaveAttribute("data-state", "ready");
  await expect(page.getByTestId("generation-S0")).toBeVisible();
  await expect(page.getByTestId("generation-S1")).toHaveCount(0);

  const changeId = await test.step("ask for a high-risk Change with a Work Graph a -> b, a -> c", async () => {
    await page.getByTestId("new-change-link").click();
    await expect(page).toHaveURL(`/projects/${projectId}/changes/new`);
    await fillChangeForm(page, wishlistPageChange(`Wishlist page for ${name}`));
    // From here on, record every state each Task node shows. The form goes to the Change page
    // without loading a new document, so this records the Work Graph from its first render.
    await page.evaluate(recordTaskStates);
    return submitChange(page, projectId);
  });

  await test.step("the Work Graph turns green live, without a reload", async () => {
    await expect(page.getByTestId("change-view")).toHaveAttribute("data-state", "ready");
    for (const key of ["a", "b", "c"]) {
      await expect(page.getByTestId(`task-node-${key}`)).toHaveAttribute("data-state", "completed", {
        timeout: 120_000,
      });
    }
    const seen = await page.evaluate(() => (window as unknown as TaskStateWindow).e2eTaskStates);
    // The same document all along (a reload would have dropped the recorder), and b and c were seen
    // waiting for a before they turned green: the page followed the run as it happened.
    expect(seen, "no reload since the form").toBeDefined();
    for (const key of ["b", "c"]) {
      const states = seen?.[`task-node-${key}`] ?? [];
      expect(states.at(-1), key).toBe("completed");
      expect(states.length, `${key} went through ${states.join(" -> ")}`).toBeGreaterThan(1);
      expect(states[0], key).not.toBe("completed");
    }
    await expect(page.getByTestId("agent-runs")).toHaveAttribute("data-state", "ready");
    await expect(page.getByTestId("agent-run").and(page.locator('[data-status="completed"]'))).toHaveCount(3);
    await expect(page.getByTestId("changesets")).toHaveAttribute("data-state", "ready");
  });

  await test.step("each run shows the Context Packet it was given", async () => {
    const runB = page.locator('[data-testid="agent-run"][data-task-key="b"][data-status="completed"]');
    await runB.getByTestId("context-packet-toggle").click();
    const packet = runB.getByTestId("context-packet");
    await expect(packet).toHaveAttribute("data-state", "ready");
    await expect(packet).toHaveAttribute("data-packet-id", /^ctxp_/);
    // Task b declares public/index.html; the project's README is always offered.
    for (const path of ["public/index.html", "README.md"]) {
      await expect(packet.locator(`[data-testid="context-item"][data-path="${path}"]`), path).toHaveCount(1);
    }
    await expect(packet.getByTestId("context-packet-summary")).toContainText("files");
    await runB.getByTestId("context-packet-toggle").click();
    await expect(runB.getByTestId("context-packet")).toHaveCount(0);
  });

  const candidateLink = page.locator('[data-testid^="candidate-link-"]');
  await expect(candidateLink).toHaveCount(1, { timeout: 30_000 });
  const candidateId = ((await candidateLink.getAttribute("data-testid")) ?? "").replace("candidate-link-", "");
  expect(candidateId).not.toBe("");
  await saveScreenshot(page, "change");

  await test.step("the Candidate is verified, with passing Evidence for every required check", async () => {
    await candidateLink.click();
    await expect(page).toHaveURL(`/projects/${projectId}/candidates/${candidateId}`);
    const status = await waitForVerdict(page, 180_000);
    expect(status, await verdictSummary(page)).toBe("verified");
    await expect(page.getByTestId("candidate-live")).toHaveCount(0);
    await expect(page.getByTestId("gate-promotable")).toHaveText("checks satisfied · waits for approval");
    await expect(page.getByTestId("candidate-gaps-none")).toBeVisible();
    await expect(page.getByTestId("plan-human-gate")).toHaveAttribute("data-human-gate", "true");
    for (const check of HIGH_RISK_CHECKS) {
      const row = page.getByTestId(`check-${check}`);
      await expect(row, check).toHaveAttribute("data-gap", "none");
      await expect(row, check).toHaveAttribute("data-status", "pass");
      await expect(row.getByTestId("evidence-record").first(), check).toHaveAttribute("data-status", "pass");
    }
    // The browser check is the shop's own Playwright test (templates/shop/e2e), recorded by name.
    const browser = page.getByTestId("check-browser");
    await expect(browser.getByTestId("evidence-tests-rest").first()).toContainText(
      "a wishlisted mug moves to the cart",
    );
    // Its screenshot is served from the blob store and actually decodes.
    const shot = browser.getByTestId("evidence-screenshot").first();
    await expect(shot).toBeVisible();
    await expect
      .poll(() => shot.evaluate((img: HTMLImageElement) => (img.complete ? img.naturalWidth : 0)), { timeout: 15_000 })
      .toBeGreaterThan(0);
    // Its Playwright trace is a download, served as a zip.
    const trace = browser
      .getByTestId("evidence-attachment")
      .filter({ hasText: /^trace: / })
      .first();
    await expect(trace).toBeVisible();
    const traceResponse = await page.request.get((await trace.getAttribute("href")) ?? "");
    expect(traceResponse.status()).toBe(200);
    expect(traceResponse.headers()["content-type"]).toBe("application/zip");
    expect((await traceResponse.body()).subarray(0, 2).toString()).toBe("PK");
  });

  await test.step("an approver approves exactly the composed tree shown, and promotes it", async () => {
    const candidate = await trpcData<{ composedTree: string | null }>(
      await trpcQuery(page.request, "candidate.get", { tenantId: DEMO_TENANT, candidateId }),
    );
    expect(candidate.composedTree).toMatch(/^[0-9a-f]{40}$/);
    await expect(page.getByTestId("candidate-composed-tree")).toHaveAttribute(
      "data-value",
      candidate.composedTree ?? "",
    );
    await expect(page.getByTestId("approve-tree-hash")).toHaveText(candidate.composedTree ?? "");
    await expect(page.getByTestId("approval-state")).toHaveText("pending");
    // The decision first, and only its actions: approve now, Promote once approved.
    await expectDecision(page, {
      state: "ready_to_approve",
      headline: "Ready to approve: every required check passed",
      actions: ["approve", "reject"],
    });
    await page.getByTestId("decision-header").getByTestId("approve-button").click();
    await expect(page.getByTestId("approval-state")).toHaveText("granted");
    await expect(page.getByTestId("approval-decision")).toContainText(candidate.composedTree?.slice(0, 12) ?? "");
    // People by name, not by ID.
    await expect(page.getByTestId("approval-decided-by")).toHaveText("Demo Admin");
    await expect(page.getByTestId("decision-header")).toHaveAttribute("data-state", "ready_to_promote");
    await expect(page.getByTestId("decision-headline")).toContainText("approved by Demo Admin");
    await expectDecision(page, {
      state: "ready_to_promote",
      headline: "Ready to promote: approved by Demo Admin",
      actions: ["promote"],
      screenshot: "candidate-decision-approved",
    });
    await expect(page.getByTestId("gate-promotable")).toHaveText("promotable");

    await page.getByTestId("decision-header").getByTestId("promote-button").click();
    await expect(page.getByTestId("promote-outcome")).toHaveAttribute("data-outcome", "promoted", { timeout: 30_000 });
    await expect(page.getByTestId("promote-outcome")).toContainText("S1");
    await expect(page.getByTestId("candidate-status")).toHaveAttribute("data-status", "promoted");
    await expect(page.getByTestId("decision-header")).toHaveAttribute("data-state", "promoted");
    await expect(page.getByTestId("decision-headline")).toContainText("Promoted as generation 1 by Demo Admin");
    await expect(page.getByTestId("promote-button")).toHaveCount(0);
    await saveScreenshot(page, "candidate");
  });

  await test.step("the project overview shows S1, from this Candidate", async () => {
    await page.goto(`/projects/${projectId}`);
    const s1 = page.getByTestId("generation-S1");
    await expect(s1).toBeVisible();
    await expect(s1).toHaveAttribute("data-candidate-id", candidateId);
    await expect(page.getByTestId("project-generation")).toHaveText("S1");
    await expect(page.getByTestId("change-row").filter({ hasText: changeId })).toBeVisible();
    await expect(page.getByTestId("event-feed")).toHaveAttribute("data-state", "live");
    await expect(page.getByTestId("event-row").and(page.locator('[data-event-type="canonical.advanced"]'))).toHaveCount(
      1,
    );
    await saveScreenshot(page, "project-overview");
  });

  await test.step("the release of S1 succeeds, its index is built and the code search finds the promoted code", async () => {
    const release = page.getByTestId("releases-panel").getByTestId("release-row");
    await expect(release).toHaveCount(1);
    // The panel refreshes itself while the release runs.
    await expect(release).toHaveAttribute("data-status", "succeeded", { timeout: 60_000 });
    await expect(release.getByTestId("release-error")).toHaveCount(0);
    await expect(page.getByTestId("index-status")).toHaveAttribute("data-status", "built", { timeout: 60_000 });
    await page.getByTestId("code-search-input").fill("wishlistSummary");
    await page.getByTestId("code-search-submit").click();
    const hits = page.getByTestId("code-search-hit");
    await expect(hits.filter({ hasText: /^src\/wishlist-summary\.ts:\d+$/ }).first()).toBeVisible();
    await page.getByTestId("code-search-input").fill("zzznothinglikethis");
    await page.getByTestId("code-search-submit").click();
    await expect(page.getByTestId("code-search-results")).toHaveAttribute("data-state", "empty");
  });

  await test.step("an admin is told what to give for a relative folder path, and sets a webhook for future promotions", async () => {
    const form = page.getByTestId("release-target-form");
    await expect(form.getByTestId("release-target-current")).toHaveAttribute("data-kind", "folder");
    await form.getByTestId("release-target-kind").selectOption("folder");
    await form.getByTestId("release-target-path").fill("releases/shop");
    await form.getByTestId("release-target-save").click();
    await expect(form.getByTestId("release-target-error")).toContainText("absolute folder path");
    await form.getByTestId("release-target-kind").selectOption("webhook");
    await form.getByTestId("release-target-url").fill("https://deploy.example.com/hooks/release");
    await form.getByTestId("release-target-save").click();
    await expect(form.getByTestId("release-target-saved")).toBeVisible();
    await expect(form.getByTestId("release-target-current")).toHaveAttribute("data-kind", "webhook");
    // The release already made keeps its folder target.
    await expect(page.getByTestId("release-row")).toContainText("to folder");
    await saveScreenshot(page, "project-overview-releases");
  });

  await test.step("git clone over HTTP with the read token gets the promoted source", async () => {
    await page.getByTestId("clone-url-button").click();
    const url = (await page.getByTestId("clone-url").getAttribute("data-url")) ?? "";
    expect(url).toMatch(/^http:\/\/x:[^@]+@localhost:\d+\/git\/.+\.git$/);
    const dir = await mkdtemp(join(tmpdir(), "rhumbatron-e2e-clone-"));
    try {
      await run("git", ["clone", "--quiet", url, join(dir, name)], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", GIT_TERMINAL_PROMPT: "0", HOME: dir },
        timeout: 60_000,
      });
      const checkout = join(dir, name);
      expect(await readFile(join(checkout, "public/wishlist.html"), "utf8")).toBe(WISHLIST_PAGE);
      expect(await readFile(join(checkout, "public/index.html"), "utf8")).toContain(WISHLIST_LINK);
      expect(await readFile(join(checkout, "src/wishlist-summary.ts"), "utf8")).toContain("wishlistSummary");
      const { stdout } = await run("git", ["-C", checkout, "log", "--format=%H", "-1"], {
        env: { PATH: process.env.PATH },
      });
      const promoted = await trpcData<{ composedCommit: string | null }>(
        await trpcQuery(page.request, "candidate.get", { tenantId: DEMO_TENANT, candidateId }),
      );
      // main was fast-forwarded to the composed commit.
      expect(stdout.trim()).toBe(promoted.composedCommit);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
