import { readdirSync } from "node:fs";
import { join } from "node:path";
import { candidateFork, DEFAULT_POLICY, streamIndex, type VerificationPolicy } from "@rhumbatron/core";
import { withStepsBrowserCheck } from "@rhumbatron/core/testing";
import {
  cancelChange,
  causalRouterSubscription,
  checkMetrics,
  getCandidate,
  promoteCandidate,
  withRepoToken,
} from "@rhumbatron/db";
import { useTestDatabase, waitFor } from "@rhumbatron/db/testing";
import { consumeOnce, pgNotifyNudger, postgresStreamSink, publishDue } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import {
  candidateFor,
  junitCommand,
  policyOnlyChecks,
  provisionedProject,
  type TestWorld,
  testWorld,
  verificationDeps,
} from "../test-world.ts";
import type { BrowserCheckInput, BrowserCheckResult } from "./browser-check.ts";
import { drainVerifications } from "./runner.ts";
import type { VerificationDeps } from "./verification-run.ts";

/**
 * A check stopped because its Candidate went stale is not a result of the code
 * (docs/verification.md, The workflow, step 6): nothing is recorded for it, so neither the
 * Candidate's Evidence, its Events nor the metrics page's failure counts and flake rate say it
 * failed. Real Postgres, real git, the real Sandbox and check runner; the Candidate goes stale the
 * way it does in production: another Change is promoted and the causal router reads
 * canonical.advanced.
 */
const t = useTestDatabase();

const STARTED = "targeted-started";
/**
 * One `targeted` command for every Candidate, reading the composed tree it runs on: a tree with
 * src/slow.ts says it started (a file in its own run directory) and runs for ten minutes; one with
 * src/broken.ts fails a test; any other passes.
 */
const TARGETED = [
  "node",
  "-e",
  [
    "const fs = require('fs');",
    `if (fs.existsSync('src/slow.ts')) { fs.writeFileSync('${STARTED}', 'yes'); setTimeout(() => {}, 600000); }`,
    `else if (fs.existsSync('src/broken.ts')) { ${junitCommand(0, 1)[2]} }`,
    `else { ${junitCommand(2)[2]} }`,
  ].join("\n"),
];
const policy: VerificationPolicy = {
  id: DEFAULT_POLICY.id,
  version: DEFAULT_POLICY.version,
  requiredChecksByRisk: { low: ["build", "targeted"] },
  humanGateRiskTiers: ["high", "critical"],
  commands: { build: ["node", "-e", "console.log('built')"], targeted: TARGETED },
};

const noBrowser = async (): Promise<BrowserCheckResult> => {
  throw new Error("the browser check is not expected here");
};

const verifier = (
  w: TestWorld,
  o: Partial<Pick<VerificationDeps, "policy" | "browserCheck" | "projectChecks">> = {},
): VerificationDeps =>
  verificationDeps(w, {
    policy: o.policy ?? policy,
    browserCheck: o.browserCheck ?? noBrowser,
    ...(o.projectChecks ? { projectChecks: o.projectChecks } : {}),
  });

const oneFile = (path: string) => ({
  key: "a",
  editPlan: [{ op: "write" as const, path, content: `export const file = ${JSON.stringify(path)};\n` }],
});

/** Whether a file of this name exists anywhere under `dir` (the Sandbox's run directories and their copies). */
function foundUnder(dir: string, name: string): boolean {
  try {
    return readdirSync(dir, { recursive: true, encoding: "utf8" }).some((p) => p.split("/").pop() === name);
  } catch {
    return false;
  }
}

/** Publishes the outbox and runs the causal router over the project's stream until it is quiet. */
async function route(w: TestWorld, projectId: string) {
  const deps = { config: w.config, nudger: pgNotifyNudger, now: () => new Date() };
  const abstain = {
    name: "abstain",
    classify: async () => ({ decision: "abstain" as const, probability: 0, model: "none", reason: "" }),
  };
  const sub = causalRouterSubscription({ ...deps, classifier: abstain });
  for (let i = 0; i < 20; i++) {
    await publishDue(t.db, { config: w.config, sink: postgresStreamSink, nudger: pgNotifyNudger, now: deps.now });
    const r = await consumeOnce(t.db, sub, streamIndex(projectId, w.config.streams.count), { ...deps, owner: "t" });
    if (r.outcome === "empty") return;
  }
}

describe("a check stopped because its Candidate went stale", () => {
  it("records nothing for it: no failure on the Candidate, none in the metrics; a real failure still counts", async () => {
    const from = new Date(Date.now() - 60_000);
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);

    // Two Candidates on S0 first: one verified (promoted below), one whose test really fails.
    const good = await candidateFor(w, projectId, { requestId: "good", tasks: [oneFile("src/good.ts")] });
    const broken = await candidateFor(w, projectId, { requestId: "broken", tasks: [oneFile("src/broken.ts")] });
    const first = await drainVerifications(verifier(w));
    expect(first.map((r) => [r.candidateId, r.outcome]).sort()).toEqual(
      [
        [good.candidateId, "verified"],
        [broken.candidateId, "rejected"],
      ].sort(),
    );

    // The third Candidate's targeted check is running when the other Change is promoted.
    const slow = await candidateFor(w, projectId, { requestId: "slow", tasks: [oneFile("src/slow.ts")] });
    const verifying = drainVerifications(verifier(w));
    await waitFor("the slow targeted check to start", () => foundUnder(join(w.dir, "sandboxes"), STARTED), 120_000);
    const promoted = await promoteCandidate(
      t.db,
      { tenantId: "ten_a", actorId: "usr_approver", candidateId: good.candidateId },
      w.deps,
      {
        commitInCandidateFork: (candidateId, commit) =>
          withRepoToken(
            t.db,
            { repo: candidateFork(candidateId), mode: "read", purpose: "probe" },
            w.config,
            () => new Date(),
            (tok) => w.store.hasCommit(candidateFork(candidateId), tok, commit),
          ),
      },
    );
    expect(promoted).toMatchObject({ outcome: "promoted", generation: 1 });
    await route(w, projectId);
    expect((await t.db.candidate.findUniqueOrThrow({ where: { id: slow.candidateId } })).status).toBe("stale");

    // The running check is stopped (not run to its ten minutes) and the verification ends without a verdict.
    const [ended] = await verifying;
    expect(ended).toMatchObject({ candidateId: slow.candidateId, outcome: "skipped" });
    expect(ended?.detail).toContain("stale");

    // Nothing says the stopped check passed or failed: no record of it at all, no Event about it.
    const records = await t.db.evidence.findMany({ where: { candidateId: slow.candidateId } });
    expect(records.map((e) => [e.checkId, e.status])).toEqual([["build", "pass"]]);
    const recorded = await t.db.outboxRow.findMany({
      where: {
        eventType: "evidence.recorded",
        envelope: { path: ["payload", "candidateId"], equals: slow.candidateId },
      },
    });
    expect(recorded.map((r) => (r.envelope as { payload: { checkId: string } }).payload.checkId)).toEqual(["build"]);
    // The Candidate page: no gap is called a failure or an error, and the Candidate is stale, not rejected.
    const view = await getCandidate(t.db, { tenantId: "ten_a", candidateId: slow.candidateId }, w.config);
    expect(view.decision.state).toBe("stale");
    expect(view.gaps.map((g) => [g.checkId, g.gap])).toEqual([["targeted", "missing"]]);

    // The metrics page: the real failure is one failed tree; the stopped check counts nowhere.
    const metrics = await checkMetrics(t.db, { tenantId: "ten_a", projectId, bucket: "hour", from, to: new Date() });
    const targeted = metrics.find((m) => m.checkId === "targeted");
    expect(targeted).toMatchObject({ runs: 2, trees: 2, failedTrees: 1, flakyTrees: 0, flakeRate: 0 });
    const build = metrics.find((m) => m.checkId === "build");
    expect(build).toMatchObject({ runs: 3, trees: 3, failedTrees: 0 });
  }, 300_000);
});

const APP_STARTED = "app-started";
/**
 * A browser check as runBrowserCheck behaves when its app is killed under it (browser-check.ts,
 * startApp: the app's run is caught, and the flow then fails): the app runs in the check's
 * workspace until it stops, and the check reports the flow failed. Its result comes back normally,
 * so only the workflow can tell that it was stopped.
 */
async function appThenFlow(input: BrowserCheckInput): Promise<BrowserCheckResult> {
  const app = ["node", "-e", `require('fs').writeFileSync('${APP_STARTED}', 'yes'); setTimeout(() => {}, 600000)`];
  const ended = await input.workspace
    .run({ argv: app, timeoutMs: 600_000 })
    .catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
  return {
    status: "fail",
    coverage: "checked_supported",
    detail: `wishlist flow failed at "open /": the app exited (${ended instanceof Error ? ended.message : ended.signal})`,
    durationMs: 1,
    blockedRequests: 0,
    blockedHosts: [],
    screenshots: [],
    log: "",
  };
}

describe("a check stopped because its Change was cancelled", () => {
  it("records nothing even when the stopped check hands back a failure", async () => {
    const from = new Date(Date.now() - 60_000);
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const browserPolicy: VerificationPolicy = {
      ...policy,
      requiredChecksByRisk: { high: ["build", "browser"] },
      // The browser check finds a built app (dist/) and does not build it again.
      commands: { ...policy.commands, build: ["node", "-e", "require('fs').mkdirSync('dist', { recursive: true })"] },
    };
    const { changeId, candidateId } = await candidateFor(w, projectId, {
      requestId: "cancelled",
      riskTier: "high",
      tasks: [oneFile("src/page.ts")],
    });
    // A browser check of declared steps (the shop's own runs its Playwright tests, not this procedure).
    const projectChecks = withStepsBrowserCheck(policyOnlyChecks());
    const verifying = drainVerifications(
      verifier(w, { policy: browserPolicy, browserCheck: appThenFlow, projectChecks }),
    );
    await waitFor("the browser check's app to start", () => foundUnder(join(w.dir, "sandboxes"), APP_STARTED), 120_000);
    await cancelChange(t.db, { tenantId: "ten_a", changeId, actorId: "usr_c", reason: "not needed" }, w.deps);

    const [ended] = await verifying;
    expect(ended).toMatchObject({ candidateId, outcome: "skipped" });
    expect(ended?.detail).toContain("cancelled");
    const records = await t.db.evidence.findMany({ where: { candidateId } });
    // `targeted` (every Change's, by the checks file) may have passed before the cancel; nothing failed.
    expect(records.filter((e) => e.checkId !== "targeted").map((e) => [e.checkId, e.status])).toEqual([
      ["build", "pass"],
    ]);
    expect(records.every((e) => e.status === "pass")).toBe(true);
    const metrics = await checkMetrics(t.db, { tenantId: "ten_a", projectId, bucket: "hour", from, to: new Date() });
    expect(metrics.find((m) => m.checkId === "browser")).toBeUndefined();
  }, 300_000);
});
