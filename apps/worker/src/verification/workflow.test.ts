import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import {
  candidateFork,
  canonicalRepo,
  DEFAULT_POLICY,
  defaultPolicyDocument,
  sourceKeys,
  type VerificationPlan,
  type VerificationPolicy,
} from "@rhumbatron/core";
import { STEPS_BROWSER_CHECK, stepsBrowserCheck, withStepsBrowserCheck } from "@rhumbatron/core/testing";
import {
  decideCandidateApproval,
  getCandidate,
  promoteCandidate,
  type SourceProbe,
  sandboxMeterScope,
  updateProjectPolicy,
  withRepoToken,
  workflowStartHandler,
} from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { consumeQueue } from "@rhumbatron/runtime";
import git from "isomorphic-git";
import { describe, expect, it } from "vitest";
import { indexingHandlers } from "../indexer/index.ts";
import { testedNode } from "../test-nodes.ts";
import {
  candidateFor,
  importedProject,
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

const t = useTestDatabase();

/** Fast checks that really run in the Sandbox: node one-liners instead of the template's scripts. */
const node = (code: string) => ["node", "-e", code];
const PASSING = junitCommand(2);
const fastPolicy = (over: Partial<VerificationPolicy> = {}): VerificationPolicy => ({
  id: DEFAULT_POLICY.id,
  version: DEFAULT_POLICY.version,
  requiredChecksByRisk: { low: ["build", "targeted"], medium: ["build", "targeted"], high: ["build", "targeted"] },
  humanGateRiskTiers: ["high", "critical"],
  commands: { build: node("console.log('built')"), targeted: PASSING, unit: PASSING },
  ...over,
});

const noBrowser = async (): Promise<BrowserCheckResult> => {
  throw new Error("the browser check is not expected here");
};

function verifier(
  w: TestWorld,
  policy?: VerificationPolicy,
  browserCheck: VerificationDeps["browserCheck"] = noBrowser,
  projectChecks?: VerificationDeps["projectChecks"],
): VerificationDeps {
  return verificationDeps(w, {
    ...(policy ? { policy } : {}),
    browserCheck,
    ...(projectChecks ? { projectChecks } : {}),
  });
}

const probe = (w: TestWorld): SourceProbe => ({
  commitInCandidateFork: (candidateId, commit) => {
    const fork = candidateFork(candidateId);
    return withRepoToken(
      t.db,
      { repo: fork, mode: "read", purpose: "probe" },
      w.config,
      () => new Date(),
      (tok) => w.store.hasCommit(fork, tok, commit),
    );
  },
});

const banner = {
  key: "a",
  editPlan: [{ op: "write" as const, path: "src/banner.ts", content: "export const banner = 'Hi';\n" }],
};
const footer = {
  key: "b",
  editPlan: [{ op: "write" as const, path: "src/footer.ts", content: "export const footer = 'Bye';\n" }],
};

async function eventsOf(changeId: string, type: string) {
  const rows = await t.db.outboxRow.findMany({
    where: { eventType: type, envelope: { path: ["changeId"], equals: changeId } },
  });
  return rows.map((r) => ({ ...r, payload: (r.envelope as { payload: unknown }).payload }));
}

describe("CandidateVerificationWorkflow", () => {
  it("fails the contract check on a route the Change did not declare, and rejects the Candidate with it", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const line = '  { method: "GET", path: "/api/wishlist", handler: "getWishlist", actions: ["wishlist:read"] },\n';
    const { changeId, candidateId } = await candidateFor(w, projectId, {
      requestId: "undeclared-route",
      riskTier: "medium",
      tasks: [
        {
          key: "a",
          editPlan: [
            {
              op: "replace" as const,
              path: "src/routes.ts",
              find: line,
              replace: `${line}  { method: "GET", path: "/api/wishlist/count", handler: "getWishlist", actions: ["wishlist:read"] },\n`,
            },
          ],
        },
      ],
    });
    const [r] = await drainVerifications(verifier(w));
    expect(r).toMatchObject({ candidateId, outcome: "rejected" });
    const contract = await t.db.evidence.findFirstOrThrow({ where: { candidateId, checkId: "contract" } });
    expect(contract).toMatchObject({ status: "fail", coverage: "checked_supported" });
    expect(contract.detail).toBe("undeclared routes: GET /api/wishlist/count");
    // A reader sees what ran, its exit code and the end of its output without opening the log.
    expect(contract.command).toBe("npm run -s contract");
    expect(contract.metrics).toMatchObject({ exitCode: 0 });
    expect(contract.outputTail).toContain("/api/wishlist/count");
    expect(contract.outputTail?.split("\n").length).toBeLessThanOrEqual(40);
    const build = await t.db.evidence.findFirstOrThrow({ where: { candidateId, checkId: "build" } });
    expect(build).toMatchObject({ status: "pass", command: "npm run -s build", outputTail: null });
    const c = await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } });
    expect(c.status).toBe("rejected");
    expect(await eventsOf(changeId, "candidate.rejected")).toHaveLength(1);
  });

  it("composes two ChangeSets, runs the template's real checks in the Sandbox and verifies without a gate", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const { changeId, candidateId } = await candidateFor(w, projectId, {
      requestId: "real",
      riskTier: "medium",
      tasks: [banner, footer],
    });
    const [r] = await drainVerifications(verifier(w));
    expect(r).toMatchObject({ candidateId, outcome: "verified" });
    const c = await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId }, include: { evidence: true } });
    expect(c.status).toBe("verified");
    expect(c.approvalRequired).toBe(false);
    expect(c.evidence.map((e) => [e.checkId, e.status, e.coverage]).sort()).toEqual([
      ["build", "pass", "checked_supported"],
      ["contract", "pass", "checked_supported"],
      ["targeted", "pass", "checked_supported"],
    ]);
    // Nothing maps banner.ts or footer.ts to a test, so targeted ran the whole suite: every test counted.
    expect(c.evidence.find((e) => e.checkId === "targeted")?.metrics).toMatchObject(TEMPLATE_COUNTS);
    // Every output is a blob; the composed commit is cand-<id>'s main; the Candidate patch is stored.
    for (const e of c.evidence) expect(await w.blobs.has(e.outputKey ?? "")).toBe(true);
    const patch = await w.blobs.get(sourceKeys.candidatePatch(projectId, candidateId));
    expect(new TextDecoder().decode(patch?.body)).toContain("src/banner.ts");
    expect(new TextDecoder().decode(patch?.body)).toContain("src/footer.ts");
    const fork = candidateFork(candidateId);
    const head = await withRepoToken(
      t.db,
      { repo: fork, mode: "read", purpose: "t" },
      w.config,
      () => new Date(),
      (tok) => w.store.head(fork, tok),
    );
    expect(head).toBe(c.composedCommit);
    // Titled with the Change's title, with trailers git itself parses.
    const message = (await git.readCommit({ fs, gitdir: w.store.gitdir(fork), oid: head })).commit.message;
    const change = await t.db.change.findUniqueOrThrow({ where: { id: changeId } });
    expect(message.split("\n")[0]).toBe(change.title);
    const trailers = execFileSync("git", ["interpret-trailers", "--parse"], { input: message, encoding: "utf8" });
    expect(trailers.trim().split("\n")).toEqual([`Change: ${changeId}`, `Candidate: ${candidateId}`, "Generation: 1"]);
    expect(await eventsOf(changeId, "candidate.composed")).toHaveLength(1);
    expect(await eventsOf(changeId, "candidate.verified")).toHaveLength(1);
    expect(await eventsOf(changeId, "approval.requested")).toHaveLength(0);
    expect(await eventsOf(changeId, "evidence.recorded")).toHaveLength(3);
    // The meter is settled: no reservation stays open.
    expect(await t.db.usageCounter.count({ where: { counter: "sandbox_reservation" } })).toBe(0);
    expect(await t.db.workflowInstance.findUniqueOrThrow({ where: { instanceId: candidateId } })).toMatchObject({
      status: "succeeded",
    });
  }, 180_000); // the template's real checks (tsc and its tests) on a busy 2-core machine

  it("treats a duplicate verification.start and a re-run as no-ops", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const { changeId, candidateId } = await candidateFor(w, projectId, { requestId: "dup", tasks: [banner] });
    const { workflowStartCommand } = await import("@rhumbatron/db");
    const { enqueueCommand, withTransaction } = await import("@rhumbatron/runtime");
    const again = workflowStartCommand("verification", candidateId);
    await withTransaction(t.db, (ctx) =>
      enqueueCommand(ctx, { ...again, projectId, changeId, commandId: again.commandId }, w.deps),
    );
    await consumeQueue(t.db, "verification", [workflowStartHandler(w.deps)], { ...w.deps, owner: "t" });
    expect(await t.db.workflowInstance.count({ where: { instanceId: candidateId } })).toBe(1);
    const first = await drainVerifications(verifier(w, fastPolicy()));
    expect(first.map((r) => r.outcome)).toEqual(["verified"]);
    expect(await drainVerifications(verifier(w, fastPolicy()))).toEqual([]);
    // A forced re-run of the finished instance skips: nothing is recorded twice.
    await t.db.workflowInstance.update({
      where: { instanceId: candidateId },
      data: { status: "running", leasedUntil: null },
    });
    expect((await drainVerifications(verifier(w, fastPolicy())))[0]?.outcome).toBe("skipped");
    expect(await eventsOf(changeId, "candidate.verified")).toHaveLength(1);
    expect(await t.db.evidence.count({ where: { candidateId } })).toBe(2);
  });

  it("marks a Candidate stale when canonical moved past its base", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const { changeId, candidateId } = await candidateFor(w, projectId, { requestId: "stale", tasks: [banner] });
    await t.db.project.update({ where: { id: projectId }, data: { canonicalGeneration: 1 } });
    expect((await drainVerifications(verifier(w, fastPolicy())))[0]?.outcome).toBe("stale");
    expect((await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } })).status).toBe("stale");
    expect(await eventsOf(changeId, "candidate.stale")).toHaveLength(1);
  });

  it("rejects incompatible ChangeSets (one deletes what another edits) with composition Evidence", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "incompatible",
      tasks: [
        { key: "a", editPlan: [{ op: "delete", path: "src/wishlist.ts" }] },
        { key: "b", editPlan: [{ op: "replace", path: "src/wishlist.ts", find: "export", replace: "export" + " " }] },
      ],
    });
    expect((await drainVerifications(verifier(w, fastPolicy())))[0]?.outcome).toBe("rejected");
    const c = await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId }, include: { evidence: true } });
    expect(c.status).toBe("rejected");
    expect(c.evidence).toEqual([expect.objectContaining({ checkId: "composition", status: "fail" })]);
    expect(c.evidence[0]?.detail).toContain("src/wishlist.ts");
  });

  it("rejects when the Sandbox meter has no seconds left", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const { candidateId } = await candidateFor(w, projectId, { requestId: "budget", tasks: [banner] });
    // This month's meter is spent (the agent runs above used their share).
    const used = { counter: "sandbox_used_seconds", scopeId: sandboxMeterScope(w.config.env, "ten_a") };
    const before = await t.db.usageCounter.findMany({ where: used });
    await t.db.usageCounter.updateMany({ where: used, data: { count: w.config.sandbox.monthlySeconds } });
    const [r] = await drainVerifications(verifier(w, fastPolicy())).finally(() =>
      Promise.all(
        before.map((b) =>
          t.db.usageCounter.updateMany({ where: { ...used, window: b.window }, data: { count: b.count } }),
        ),
      ),
    );
    expect(r?.outcome).toBe("rejected");
    expect(r?.detail).toMatch(/no Sandbox budget/);
    expect((await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } })).rejectionReason).toMatch(
      /no Sandbox budget/,
    );
  });

  it("rejects a merge conflict and names the conflicting paths", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const edit = (key: string, to: string) => ({
      key,
      editPlan: [{ op: "replace" as const, path: "src/catalog.ts", find: "Mug", replace: to }],
    });
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "conflict",
      tasks: [edit("a", "Cup"), edit("b", "Stein")],
    });
    expect((await drainVerifications(verifier(w, fastPolicy())))[0]?.outcome).toBe("rejected");
    const c = await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId }, include: { evidence: true } });
    expect(c.evidence[0]).toMatchObject({ checkId: "composition", status: "fail" });
    const [finished] = await eventsOf(c.changeId, "candidate.rejected");
    expect(JSON.stringify(finished?.payload)).toContain("src/catalog.ts");
    expect(await t.db.usageCounter.count({ where: { counter: "sandbox_reservation" } })).toBe(0);
  });

  it("lists every gap: failed, no signal, timeout, unmet metric, skipped browser run; a gap is never a pass", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const { changeId, candidateId } = await candidateFor(w, projectId, {
      requestId: "gaps",
      riskTier: "high",
      goals: { p95LatencyMs: 100 },
      tasks: [{ key: "a", editPlan: [{ op: "write", path: "public/banner.html", content: "<p>hi</p>\n" }] }],
    });
    await t.db.candidate.update({ where: { id: candidateId }, data: { browserRuns: 2 } });
    const policy = fastPolicy({
      requiredChecksByRisk: { high: ["build", "targeted", "security", "browser"] },
      commands: {
        build: node("process.exit(2)"),
        targeted: junitCommand(0),
        performance: node("console.log(JSON.stringify({ p95Ms: 500 }))"),
        security: node("setTimeout(() => {}, 10000)"),
      },
      timeoutSeconds: { security: 1 },
    });
    const [r] = await drainVerifications(verifier(w, policy));
    expect(r?.outcome).toBe("rejected");
    const c = await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } });
    const gaps = (c.gate as { gaps: { checkId: string; gap: string }[] }).gaps.map((g) => [g.checkId, g.gap]);
    expect(gaps.sort()).toEqual(
      [
        ["browser", "skipped"],
        ["build", "failed"],
        ["performance", "expectation_not_met"],
        ["security", expect.stringMatching(/^(error|timed_out)$/)],
        ["targeted", "no_signal"],
      ].sort(),
    );
    const rejected = await eventsOf(changeId, "candidate.rejected");
    expect((rejected[0]?.payload as { gaps: string[] } | undefined)?.gaps).toHaveLength(5);
  });

  it("records a check that throws as error / not_checked", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "throws",
      riskTier: "high",
      tasks: [banner],
    });
    const policy = fastPolicy({ requiredChecksByRisk: { high: ["build", "browser"] } });
    const crashing = async (_: BrowserCheckInput): Promise<BrowserCheckResult> => {
      throw new Error("chromium vanished");
    };
    // A browser check of declared steps (the shop's own runs its Playwright tests, not this procedure).
    const steps = withStepsBrowserCheck(policyOnlyChecks());
    expect((await drainVerifications(verifier(w, policy, crashing, steps)))[0]?.outcome).toBe("rejected");
    const e = await t.db.evidence.findFirstOrThrow({ where: { candidateId, checkId: "browser" } });
    expect(e).toMatchObject({ status: "error", coverage: "not_checked" });
    expect(e.detail).toContain("chromium vanished");
  });
});

/**
 * The template's tests, counted from their source (one `it(` or `test(` per test), as an oracle
 * independent of the reporter that the check reads.
 */
const TEMPLATE_TESTS = fs
  .readdirSync(new URL("../../../../templates/shop/test/", import.meta.url))
  .map((f) => fs.readFileSync(new URL(`../../../../templates/shop/test/${f}`, import.meta.url), "utf8"))
  .reduce((n, src) => n + (src.match(/^\s*(?:it|test)\(/gm)?.length ?? 0), 0);
const TEMPLATE_COUNTS = { tests: TEMPLATE_TESTS, passed: TEMPLATE_TESTS, failed: 0, skipped: 0 };

describe.each([20, 24] as const)("the template's real checks on Node %i", (major) => {
  it("count every test of a passing run, and reject a Change whose test script runs no test", async () => {
    const node = testedNode(major);
    const w = await testWorld(t.db, undefined, { nodeBinDir: node.binDir });
    const projectId = await provisionedProject(w);
    const passing = await candidateFor(w, projectId, { requestId: `n${major}`, riskTier: "low", tasks: [banner] });
    const noop = await candidateFor(w, projectId, {
      requestId: `n${major}-noop`,
      riskTier: "low",
      tasks: [
        {
          key: "a",
          // The related-tests script still exits 0, but runs no test and writes no report.
          editPlan: [
            {
              op: "replace",
              path: "scripts/related-tests.mjs",
              find: "const r = spawnSync(",
              replace: "const r = { status: 0 } ?? spawnSync(",
            },
          ],
        },
      ],
    });
    const outcomes = await drainVerifications(verifier(w));
    expect(outcomes.map((o) => [o.candidateId, o.outcome]).sort()).toEqual(
      [
        [passing.candidateId, "verified"],
        [noop.candidateId, "rejected"],
      ].sort(),
    );
    const evidence = async (candidateId: string) =>
      (await t.db.evidence.findMany({ where: { candidateId, checkId: "targeted" } }))[0];
    // Every test was counted from the JUnit report the check wrote, each one kept by name, and the
    // tests ran on this Node (the spec reporter's summary is in the log beside the report).
    const ran = await evidence(passing.candidateId);
    expect(ran?.metrics, `on ${node.version}`).toMatchObject(TEMPLATE_COUNTS);
    expect(ran?.tests as unknown[]).toHaveLength(TEMPLATE_TESTS);
    expect(((ran?.tests ?? []) as { status: string }[]).every((x) => x.status === "passed")).toBe(true);
    const log = new TextDecoder().decode((await w.blobs.get(ran?.outputKey ?? ""))?.body);
    expect(log).toMatch(/^\u2139 tests \d+$/m);
    expect(log).toContain("no test maps to src/banner.ts: every test runs");
    expect(await evidence(noop.candidateId), `on ${node.version}`).toMatchObject({
      status: "pass",
      coverage: "checked_no_signal",
      detail: expect.stringContaining("no test is known to have run"),
    });
    const view = await getCandidate(t.db, { tenantId: "ten_a", candidateId: noop.candidateId }, w.config);
    expect(view.gaps.map((g) => [g.checkId, g.gap])).toEqual([["targeted", "no_signal"]]);
  }, 240_000);
});

describe("the browser check", () => {
  it("drives the app and the steps the base's checks file gives", async () => {
    const w = await testWorld(t.db);
    // A project whose checks file declares its browser check as steps (procedure: browser).
    const checksFile = STEPS_BROWSER_CHECK.replace(
      "checks:\n",
      "checks:\n  - id: build\n    run: [node, -e, \"console.log('built')\"]\n    prepares: true\n",
    );
    const projectId = await importedProject(w, { "README.md": "# steps\n", ".rhumbatron/checks.yml": checksFile });
    const seen: Pick<BrowserCheckInput, "start" | "steps">[] = [];
    const recording = async (input: BrowserCheckInput): Promise<BrowserCheckResult> => {
      seen.push({ start: input.start, steps: input.steps });
      return {
        status: "pass",
        coverage: "checked_supported",
        detail: `all ${input.steps.length} steps passed`,
        durationMs: 1,
        blockedRequests: 0,
        blockedHosts: [],
        screenshots: [],
        log: "",
      };
    };
    const { candidateId } = await candidateFor(w, projectId, { requestId: "steps", riskTier: "high", tasks: [banner] });
    // No test policy: the checks come from the base's checks file.
    await drainVerifications(verifier(w, undefined, recording));
    const e = await t.db.evidence.findFirstOrThrow({ where: { candidateId, checkId: "browser" } });
    expect(e.detail).toBe("all 9 steps passed");
    expect(seen).toEqual([
      {
        start: ["node", "dist/src/server.js"],
        steps: stepsBrowserCheck().steps,
      },
    ]);
  });
});

describe("approval and promotion", () => {
  async function verifiedWithGate(w: TestWorld, requestId: string) {
    const projectId = await provisionedProject(w);
    const ids = await candidateFor(w, projectId, { requestId, riskTier: "high", tasks: [banner, footer] });
    expect((await drainVerifications(verifier(w, fastPolicy())))[0]?.outcome).toBe("verified");
    const c = await t.db.candidate.findUniqueOrThrow({ where: { id: ids.candidateId } });
    return { ...ids, projectId, tree: c.composedTree ?? "", commit: c.composedCommit ?? "" };
  }
  const who = { tenantId: "ten_a", actorId: "usr_approver" };
  type Verified = Awaited<ReturnType<typeof verifiedWithGate>>;
  /** The approver grants v's tree, unless `over` says otherwise (another kind, tree, note, user or tenant). */
  const decide = (w: TestWorld, v: Verified, over: Partial<Parameters<typeof decideCandidateApproval>[1]> = {}) =>
    decideCandidateApproval(
      t.db,
      {
        tenantId: "ten_a",
        candidateId: v.candidateId,
        userId: "usr_approver",
        kind: "granted",
        treeHash: v.tree,
        ...over,
      },
      w.deps,
    );
  const promote = (w: TestWorld, v: Verified, sourceProbe: SourceProbe = probe(w)) =>
    promoteCandidate(t.db, { ...who, candidateId: v.candidateId }, w.deps, sourceProbe);

  it("verified with a gate: promotion is blocked until approved for this tree, then promotes once", async () => {
    const w = await testWorld(t.db);
    const v = await verifiedWithGate(w, "gate");
    expect(await eventsOf(v.changeId, "approval.requested")).toHaveLength(1);
    const view = () => getCandidate(t.db, { tenantId: "ten_a", candidateId: v.candidateId }, w.config);
    // What the reader sees first, and the only actions offered, at each step.
    expect((await view()).decision).toMatchObject({ state: "ready_to_approve", actions: ["approve", "reject"] });
    const blocked = await promote(w, v);
    expect(blocked).toEqual({ outcome: "blocked", blocks: ["approval is pending"] });
    // A grant for another tree is refused and changes nothing.
    await expect(decide(w, v, { treeHash: "f".repeat(40) })).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await t.db.approval.count()).toBe(0);
    await decide(w, v);
    // The first decision is final.
    await expect(decide(w, v, { userId: "usr_x", kind: "rejected", note: "no" })).rejects.toMatchObject({
      code: "CONFLICT",
    });

    await t.db.user.upsert({
      where: { id: "usr_approver" },
      create: { id: "usr_approver", email: "approver@example.com", name: "Ada Approver" },
      update: {},
    });
    expect((await view()).decision).toMatchObject({
      state: "ready_to_promote",
      headline: "Ready to promote: approved by Ada Approver",
      actions: ["promote"],
    });
    const promoted = await promote(w, v);
    expect(promoted).toMatchObject({ outcome: "promoted", generation: 1, commit: v.commit, tree: v.tree });
    const after = await view();
    expect(after.decision).toMatchObject({ state: "promoted", actions: [] });
    expect(after.decision.headline).toBe("Promoted as generation 1 by Ada Approver");
    expect(after.people).toEqual({ usr_approver: "Ada Approver" });
    expect(await t.db.project.findUniqueOrThrow({ where: { id: v.projectId } })).toMatchObject({
      canonicalGeneration: 1,
    });
    expect((await t.db.change.findUniqueOrThrow({ where: { id: v.changeId } })).status).toBe("promoted");
    expect(await t.db.outboxRow.count({ where: { projectId: v.projectId, eventType: "canonical.advanced" } })).toBe(1);
    expect(await t.db.outboxRow.count({ where: { projectId: v.projectId, eventType: "artifact.promoted" } })).toBe(1);
    expect(await t.db.release.findUniqueOrThrow({ where: { id: `rel_${v.projectId}_1` } })).toMatchObject({
      commit: v.commit,
      status: "running",
    });
    // A retry after success is alreadyPromoted and advances nothing.
    const again = await promote(w, v);
    expect(again).toEqual({ outcome: "alreadyPromoted", generation: 1 });
    expect(await t.db.canonicalGeneration.count({ where: { projectId: v.projectId } })).toBe(2);
    expect(await t.db.outboxRow.count({ where: { projectId: v.projectId, eventType: "canonical.advanced" } })).toBe(1);
  });

  it("a rejection rejects the Candidate, and promotion lists every block", async () => {
    const w = await testWorld(t.db);
    const v = await verifiedWithGate(w, "reject");
    await expect(decide(w, v, { kind: "rejected", note: " " })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await decide(w, v, { kind: "rejected", note: "too risky" });
    expect((await t.db.candidate.findUniqueOrThrow({ where: { id: v.candidateId } })).status).toBe("rejected");
    const r = await promote(w, v);
    expect(r.outcome).toBe("blocked");
    expect(r.outcome === "blocked" && r.blocks).toEqual([
      "the Candidate is rejected, not verified",
      "approval was rejected: too risky",
    ]);
    expect(await t.db.project.findUniqueOrThrow({ where: { id: v.projectId } })).toMatchObject({
      canonicalGeneration: 0,
    });
  });

  it("promote after canonical moved is stale; a missing fork commit blocks", async () => {
    const w = await testWorld(t.db);
    const v = await verifiedWithGate(w, "moved");
    await decide(w, v);
    const gone = await promote(w, v, { commitInCandidateFork: async () => false });
    expect(gone).toEqual({ outcome: "blocked", blocks: ["the composed commit is not in the Candidate fork"] });
    await t.db.project.update({ where: { id: v.projectId }, data: { canonicalGeneration: 1 } });
    expect(await promote(w, v)).toEqual({
      outcome: "stale",
      canonicalGeneration: 1,
    });
    expect((await t.db.candidate.findUniqueOrThrow({ where: { id: v.candidateId } })).status).toBe("stale");
    expect(await eventsOf(v.changeId, "candidate.stale")).toHaveLength(1);
  });

  it("a failed fast-forward of main keeps the CAS; a retried promotion repairs the source sync", async () => {
    const w = await testWorld(t.db);
    const v = await verifiedWithGate(w, "repair");
    await decide(w, v);
    expect(await promote(w, v)).toMatchObject({
      outcome: "promoted",
      generation: 1,
    });
    const repo = canonicalRepo(v.projectId);
    const main = () =>
      withRepoToken(
        t.db,
        { repo, mode: "read", purpose: "t" },
        w.config,
        () => new Date(),
        (tok) => w.store.head(repo, tok),
      );
    const s0 = await main();
    // The push fails: the index build (which syncs main first) fails; canonical stays S1 in the database.
    const broken = Object.create(w.store) as typeof w.store;
    broken.fastForward = async () => {
      throw new Error("disk full");
    };
    const consumer = { ...w.deps, owner: "t" };
    const failed = await consumeQueue(t.db, "indexing", indexingHandlers({ ...w.deps, source: broken }), consumer);
    expect(failed.actions.retry).toBe(1);
    expect(await main()).toBe(s0);
    expect((await t.db.project.findUniqueOrThrow({ where: { id: v.projectId } })).canonicalGeneration).toBe(1);
    // Its retries run out (the indexing queue records the failure and drops the command) …
    await t.db.queueMessage.deleteMany({ where: { queue: "indexing" } });
    // … and a retry of the promotion is alreadyPromoted and sends the sync again, which repairs main.
    expect(await promote(w, v)).toEqual({
      outcome: "alreadyPromoted",
      generation: 1,
    });
    const repaired = await consumeQueue(t.db, "indexing", indexingHandlers(w.deps), consumer);
    expect(repaired.actions.ack).toBe(1);
    expect(await main()).toBe(v.commit);
    expect(await w.blobs.has(sourceKeys.code(v.projectId, v.tree))).toBe(true);
  });

  it("another tenant cannot see, approve or promote the Candidate", async () => {
    const w = await testWorld(t.db);
    const v = await verifiedWithGate(w, "tenant");
    await expect(
      promoteCandidate(t.db, { tenantId: "ten_other", actorId: "x", candidateId: v.candidateId }, w.deps, probe(w)),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(decide(w, v, { tenantId: "ten_other", userId: "x" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(canonicalRepo(v.projectId)).toBe(v.projectId);
  });
});

describe("the project's policy", () => {
  it("plans under the project's active version (checks, commands, timeouts, gate); an edit after it blocks promotion", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const defaults = defaultPolicyDocument(w.config);
    const fast = fastPolicy();
    // v2: the fast commands, a build timeout of its own, and a person's approval for low risk; the
    // checks themselves (build and targeted at low risk) and targeted's timeout are the checks file's.
    const v2 = {
      ...defaults,
      requiredChecksByRisk: { low: ["build"], medium: ["build", "targeted"], high: ["build"], critical: ["build"] },
      humanGateRiskTiers: ["low"],
      commands: fast.commands,
      timeoutSeconds: { ...defaults.timeoutSeconds, build: 45 },
    };
    const admin = { tenantId: "ten_a", projectId, actorId: "usr_admin" };
    expect(await updateProjectPolicy(t.db, { ...admin, document: v2, expectedVersion: 1 }, w.deps)).toMatchObject({
      version: 2,
    });
    const v = await candidateFor(w, projectId, { requestId: "policy", riskTier: "low", tasks: [banner] });
    // No stand-in policy: the workflow reads the project's.
    expect((await drainVerifications(verifier(w)))[0]).toMatchObject({
      candidateId: v.candidateId,
      outcome: "verified",
    });
    const c = await t.db.candidate.findUniqueOrThrow({ where: { id: v.candidateId }, include: { evidence: true } });
    const plan = c.plan as unknown as VerificationPlan;
    expect(plan).toMatchObject({ policyId: "policy-1", policyVersion: 2, humanGate: true });
    expect(plan.humanGateReasons).toEqual(["policy-1 gates low risk"]);
    expect(plan.checks.map((k) => [k.id, k.timeoutSeconds, k.argv])).toEqual([
      ["build", 45, fast.commands?.build],
      ["targeted", 180, fast.commands?.targeted],
    ]);
    expect(c.evidence.map((e) => [e.checkId, e.status, e.timeoutSeconds]).sort()).toEqual([
      ["build", "pass", 45],
      ["targeted", "pass", 180],
    ]);
    expect(c.approvalRequired).toBe(true);
    expect(await eventsOf(v.changeId, "approval.requested")).toHaveLength(1);
    await decideCandidateApproval(
      t.db,
      {
        tenantId: "ten_a",
        candidateId: v.candidateId,
        userId: "usr_approver",
        kind: "granted",
        treeHash: c.composedTree ?? "",
      },
      w.deps,
    );

    // The policy moves on before anyone promotes: the Candidate answered v2's checks, v3 is in force.
    await updateProjectPolicy(t.db, { ...admin, document: { ...v2, rerunBudget: 4 }, expectedVersion: 2 }, w.deps);
    const promote = () =>
      promoteCandidate(
        t.db,
        { tenantId: "ten_a", actorId: "usr_approver", candidateId: v.candidateId },
        w.deps,
        probe(w),
      );
    expect(await promote()).toEqual({
      outcome: "blocked",
      blocks: ["the plan used policy-1 v2, the active policy is policy-1 v3"],
    });
    expect((await t.db.project.findUniqueOrThrow({ where: { id: projectId } })).canonicalGeneration).toBe(0);
  });
});
