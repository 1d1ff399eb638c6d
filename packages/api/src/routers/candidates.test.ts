import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { ACME, callerAs, emailFor, OTHER, OUTSIDER_EMAIL, seedTenants } from "../testing/fixtures.ts";

const t = useTestDatabase();
const shop = "proj_00000000-0000-4000-8000-00000000a001";

beforeAll(async () => {
  await seedTenants(t.db);
  await t.db.change.create({
    data: { id: "chg_w", projectId: shop, title: "Wishlist", riskTier: "medium", clientRequestId: "w" },
  });
  await t.db.task.create({ data: { id: "task_w", changeId: "chg_w", key: "a", title: "a", state: "completed" } });
  await t.db.changeSet.create({
    data: {
      id: "cs_w",
      changeId: "chg_w",
      taskId: "task_w",
      runId: "run_w",
      agentId: "agt",
      fork: "ws-x",
      baseCommit: "c0",
      commit: "c1",
      patchRef: "source/p/patches/changesets/cs_w.patch",
    },
  });
  await t.db.candidate.create({
    data: {
      id: "cand_0123456789abcdef",
      projectId: shop,
      changeId: "chg_w",
      compositionKey: "k",
      baseGeneration: 0,
      baseCommit: "c0",
      changeSetIds: ["cs_w"],
    },
  });
});

describe("candidate.list and candidate.get", () => {
  it("show a viewer the tenant's Candidates with their Change's title, and their ChangeSets in composition order", async () => {
    const viewer = callerAs(t.db, emailFor("viewer"));
    const list = await viewer.candidate.list({ tenantId: ACME.tenantId, projectId: shop });
    // Each with its Change's title beside the ID (a field added for the list; the rest is unchanged).
    expect(list.map((c) => [c.id, c.changeId, c.changeTitle])).toEqual([
      ["cand_0123456789abcdef", "chg_w", "Wishlist"],
    ]);
    const c = await viewer.candidate.get({ tenantId: ACME.tenantId, candidateId: "cand_0123456789abcdef" });
    expect(c).toMatchObject({ status: "created", baseGeneration: 0, verification: null });
    expect(c.changeSets.map((cs) => [cs.id, cs.patchRef])).toEqual([
      ["cs_w", "source/p/patches/changesets/cs_w.patch"],
    ]);
  });

  it("hide them from other tenants", async () => {
    const outsider = callerAs(t.db, OUTSIDER_EMAIL);
    await expect(
      outsider.candidate.get({ tenantId: OTHER.tenantId, candidateId: "cand_0123456789abcdef" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(outsider.candidate.list({ tenantId: OTHER.tenantId, projectId: shop })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(outsider.candidate.list({ tenantId: ACME.tenantId, projectId: shop })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });
});

describe("candidate.approve, candidate.reject and candidate.promote", () => {
  const cand = "cand_00000000000000000000000000000abc";
  const tree = "a".repeat(40);
  const plan = {
    policyId: "policy-1",
    policyVersion: 1,
    riskTier: "high",
    checks: [{ id: "build", kind: "build", timeoutSeconds: 120, argv: ["npm", "run", "build"], reason: "r" }],
    humanGate: true,
    humanGateReasons: ["policy-1 gates high risk"],
  };
  beforeAll(async () => {
    await t.db.candidate.create({
      data: {
        id: cand,
        projectId: shop,
        changeId: "chg_w",
        compositionKey: "k2",
        baseGeneration: 0,
        baseCommit: "c0",
        changeSetIds: ["cs_w"],
        status: "verified",
        composedCommit: "b".repeat(40),
        composedTree: tree,
        plan,
        approvalRequired: true,
      },
    });
    await t.db.evidence.create({
      data: {
        id: "ev_build",
        candidateId: cand,
        checkId: "build",
        kind: "build",
        status: "pass",
        coverage: "checked_supported",
        durationMs: 900,
        timeoutSeconds: 120,
        completedAt: new Date(),
      },
    });
  });

  it("refuse a viewer and a malformed tree hash before anything changes", async () => {
    const viewer = callerAs(t.db, emailFor("viewer"));
    await expect(
      viewer.candidate.approve({ tenantId: ACME.tenantId, candidateId: cand, treeHash: tree }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    const approver = callerAs(t.db, emailFor("approver"));
    await expect(
      approver.candidate.approve({ tenantId: ACME.tenantId, candidateId: cand, treeHash: "abc" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(
      approver.candidate.reject({ tenantId: ACME.tenantId, candidateId: cand, treeHash: tree, note: "  " }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await t.db.approval.count()).toBe(0);
  });

  it("show the plan, the Evidence, no gaps and a pending approval; promotion lists every block", async () => {
    const approver = callerAs(t.db, emailFor("approver"));
    const c = await approver.candidate.get({ tenantId: ACME.tenantId, candidateId: cand });
    expect(c.plan?.checks.map((k) => k.id)).toEqual(["build"]);
    expect(c.evidence.map((e) => [e.checkId, e.status])).toEqual([["build", "pass"]]);
    expect(c.gaps).toEqual([]);
    expect(c.approval).toMatchObject({ required: true, state: "pending" });
    // No fork on this machine holds the composed commit, and nobody has approved.
    const r = await approver.candidate.promote({ tenantId: ACME.tenantId, candidateId: cand });
    expect(r).toEqual({
      outcome: "blocked",
      blocks: ["approval is pending", "the composed commit is not in the Candidate fork"],
    });
  });

  it("bind a grant to the tree shown: a stale hash is refused, the first decision is final", async () => {
    const approver = callerAs(t.db, emailFor("approver"));
    await expect(
      approver.candidate.approve({ tenantId: ACME.tenantId, candidateId: cand, treeHash: "f".repeat(40) }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    const ok = await approver.candidate.approve({ tenantId: ACME.tenantId, candidateId: cand, treeHash: tree });
    expect(ok.decision).toMatchObject({ kind: "granted", treeHash: tree, by: "usr_acme_approver" });
    await expect(
      approver.candidate.reject({
        tenantId: ACME.tenantId,
        candidateId: cand,
        treeHash: tree,
        note: "changed my mind",
      }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    const c = await approver.candidate.get({ tenantId: ACME.tenantId, candidateId: cand });
    expect(c.approval).toMatchObject({ state: "granted" });
    expect(c.status).toBe("verified");
  });
});
