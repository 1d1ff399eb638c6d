import { loadConfig, type RhumbatronConfig, streamIndex, type VerificationPlan } from "@rhumbatron/core";
import { consumeOnce, consumeQueue, pgNotifyNudger, postgresStreamSink, publishDue } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { seedChange, seedProjects, useTestDatabase } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import { candidateCreateHandler, createCandidate } from "../verification/create-candidate.ts";
import { finishCandidateVerification, markCandidateComposed } from "../verification/workflow-state.ts";
import { causalRouterSubscription } from "./causal-router.ts";

/**
 * Speculative stacks at the rows (stack.ts): where each Change's Candidate is placed, who waits,
 * and what a failure in the middle does to what sits above it. The whole-worker run, with git as
 * the oracle, is apps/worker/src/verification/stack.test.ts.
 */
const t = useTestDatabase();
const abstain = {
  name: "abstain",
  classify: async () => ({ decision: "abstain" as const, probability: 0, model: "none", reason: "" }),
};
const plan: VerificationPlan = {
  policyId: "pol_default",
  policyVersion: 1,
  riskTier: "low",
  checks: [],
  humanGate: false,
  humanGateReasons: [],
};

function deps(depth = 4) {
  const base = loadConfig("dev");
  const config: RhumbatronConfig = { ...base, integration: { ...base.integration, speculativeDepth: depth } };
  return { config, nudger: pgNotifyNudger, now: () => new Date() };
}
type Deps = ReturnType<typeof deps>;

/** A project at S0 and `n` Changes that land when ready, each with one completed Task and its ChangeSet. */
async function world(project: string, n: number): Promise<string[]> {
  await seedProjects(t.db, [project]);
  await t.db.canonicalGeneration.create({ data: { projectId: project, generation: 0, commit: "c0", tree: "t0" } });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const change = `chg_${project}_${i}`;
    await seedChange(t.db, project, change);
    await t.db.change.update({ where: { id: change }, data: { status: "verifying", landWhenReady: true } });
    await t.db.task.create({
      data: { id: `task_${change}`, changeId: change, key: "a", title: "a", state: "completed" },
    });
    await t.db.changeSet.create({
      data: {
        id: `cs_${change}`,
        changeId: change,
        taskId: `task_${change}`,
        runId: `run_${change}`,
        agentId: "agt",
        fork: "ws-x",
        baseCommit: "c0",
        commit: `c_${i}`,
      },
    });
    ids.push(change);
  }
  return ids;
}

const create = (change: string, d: Deps) => withTransaction(t.db, (ctx) => createCandidate(ctx, change, d, null));
const newest = (changeId: string) =>
  t.db.candidate.findFirstOrThrow({ where: { changeId }, orderBy: { createdAt: "desc" } });

/** The verification's merge: the Candidate composed (its commit named after it). */
async function compose(candidateId: string, d: Deps) {
  const c = await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } });
  await withTransaction(t.db, (ctx) =>
    markCandidateComposed(
      ctx,
      {
        candidateId,
        changeId: c.changeId,
        commit: `m_${candidateId}`,
        tree: `t_${candidateId}`,
        plan,
        approvalRequired: false,
      },
      d,
    ),
  );
}

/** Publishes and routes every Event, and runs the integration queue, until both are quiet. */
async function settle(project: string, d: Deps) {
  const sub = causalRouterSubscription({ ...d, classifier: abstain });
  for (let i = 0; i < 40; i++) {
    await publishDue(t.db, { config: d.config, sink: postgresStreamSink, nudger: pgNotifyNudger, now: d.now });
    const r = await consumeOnce(t.db, sub, streamIndex(project, d.config.streams.count), { ...d, owner: "t" });
    const q = await consumeQueue(t.db, "integration", [candidateCreateHandler(d)], { ...d, owner: "t" });
    if (r.outcome === "empty" && q.leased === 0) return;
  }
}

describe("speculative stacks", () => {
  it("stacks each Change on the one below once that one is composed, and no deeper than the depth", async () => {
    const d = deps(2);
    const [a, b, c] = await world("proj_s1", 3);
    expect(await create(a ?? "", d)).toMatchObject({ created: true });
    // A's Candidate is not composed yet: B waits for it, and says so.
    expect(await create(b ?? "", d)).toMatchObject({ waiting: expect.stringContaining("being composed") });
    const first = await newest(a ?? "");
    expect(first).toMatchObject({ baseGeneration: 0, baseCommit: "c0", stackedOn: null });
    await compose(first.id, d);
    await settle("proj_s1", d);
    // candidate.composed asked B again: it sits on A's composed commit, one generation up.
    const second = await newest(b ?? "");
    expect(second).toMatchObject({ baseGeneration: 1, baseCommit: `m_${first.id}`, stackedOn: first.id });
    expect((await t.db.change.findUniqueOrThrow({ where: { id: b } })).stackWaitSince).toBeNull();
    await compose(second.id, d);
    // Two deep is the depth: C waits although B is composed.
    expect(await create(c ?? "", d)).toMatchObject({ waiting: expect.stringContaining("full") });
    expect(await t.db.candidate.count({ where: { changeId: c } })).toBe(0);
  });

  it("a failure in the middle: what sat above it goes stale and is composed again without it", async () => {
    const d = deps(4);
    const [a, b, c] = await world("proj_s2", 3);
    await create(a ?? "", d);
    const bottom = await newest(a ?? "");
    await compose(bottom.id, d);
    await create(b ?? "", d);
    const middle = await newest(b ?? "");
    await compose(middle.id, d);
    await create(c ?? "", d);
    const top = await newest(c ?? "");
    expect(top).toMatchObject({ stackedOn: middle.id, baseGeneration: 2, baseCommit: `m_${middle.id}` });
    await compose(top.id, d);

    await withTransaction(t.db, (ctx) =>
      finishCandidateVerification(
        ctx,
        { candidateId: middle.id, changeId: b ?? "" },
        { status: "rejected", reason: "1 required check not satisfied", gaps: [] },
        d,
      ),
    );
    await settle("proj_s2", d);
    expect((await t.db.candidate.findUniqueOrThrow({ where: { id: top.id } })).status).toBe("stale");
    const again = await newest(c ?? "");
    // Recomposed on the bottom, which is still in play; the failed one is nobody's base.
    expect(again).toMatchObject({
      recomposedFrom: top.id,
      stackedOn: bottom.id,
      baseGeneration: 1,
      baseCommit: `m_${bottom.id}`,
    });
    expect(
      await t.db.candidate.count({
        where: { stackedOn: middle.id, status: { in: ["created", "verifying", "verified"] } },
      }),
    ).toBe(0);
    // A redelivery of every Event creates nothing more.
    const count = await t.db.candidate.count({ where: { projectId: "proj_s2" } });
    await t.db.processedEvent.deleteMany({});
    await t.db.streamCursor.updateMany({ data: { committedOffset: 0 } });
    await settle("proj_s2", d);
    expect(await t.db.candidate.count({ where: { projectId: "proj_s2" } })).toBe(count);
  });

  it("a stacked Candidate that fails on top of one not yet passed waits for it instead of being rejected", async () => {
    const d = deps(4);
    const [a, b] = await world("proj_s3", 2);
    await create(a ?? "", d);
    const bottom = await newest(a ?? "");
    await compose(bottom.id, d);
    await create(b ?? "", d);
    const above = await newest(b ?? "");
    await compose(above.id, d);
    await withTransaction(t.db, (ctx) =>
      finishCandidateVerification(
        ctx,
        { candidateId: above.id, changeId: b ?? "" },
        { status: "stale", canonicalGeneration: 0, waitsForBelow: bottom.id },
        d,
      ),
    );
    await settle("proj_s3", d);
    // The bottom is still verifying: B waits, with no new Candidate.
    expect(await t.db.candidate.count({ where: { changeId: b } })).toBe(1);
    expect((await t.db.change.findUniqueOrThrow({ where: { id: b } })).stackWaitSince).not.toBeNull();
    // The bottom fails: B is asked again and composed on canonical, where nothing is below it.
    await withTransaction(t.db, (ctx) =>
      finishCandidateVerification(
        ctx,
        { candidateId: bottom.id, changeId: a ?? "" },
        { status: "rejected", reason: "1 required check not satisfied", gaps: [] },
        d,
      ),
    );
    await settle("proj_s3", d);
    expect(await newest(b ?? "")).toMatchObject({ stackedOn: null, baseGeneration: 0, recomposedFrom: above.id });
  });
});
