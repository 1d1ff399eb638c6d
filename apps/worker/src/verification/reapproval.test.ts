import { approvalInterdiff, decideCandidateApproval, setLandWhenReady } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { stoppedAfterEach } from "../test-hooks.ts";
import {
  createScriptedChange,
  WHOLE_WORKER_LIMIT as LIMIT,
  oneFileChange,
  type TestWorld,
  waitForPromoted,
  waitUntil,
  wholeWorkerWithProject,
} from "../test-world.ts";

/**
 * Approval across recompositions, on the whole worker (real Postgres, git, Sandbox): a recomposed
 * Candidate asks for approval again and shows the approver what changed since (the interdiff); a
 * recomposition whose tree is byte-identical to an approved one keeps that approval and lands.
 */
const t = useTestDatabase();
const running = stoppedAfterEach();

/** A Change that writes or deletes `path` and lands when ready, and its wait until promoted. */
async function lands(w: TestWorld, projectId: string, requestId: string, op: "write" | "delete", path: string) {
  const content = op === "write" ? "export const x = 1;\n" : undefined;
  const changeId = await oneFileChange(w, projectId, {
    requestId,
    title: `${op} ${path}`,
    path,
    content,
    landWhenReady: true,
  });
  await waitForPromoted(w, [changeId]);
}

describe("approval across recompositions", () => {
  it(
    "asks again with the interdiff after the base moved, and carries the approval over to a byte-identical tree",
    async () => {
      const { w, projectId } = await wholeWorkerWithProject(t.db, t.url, running);
      // A high-risk Change behind the human gate, approved on S0 but not landing yet.
      const gated = await createScriptedChange(w, projectId, {
        requestId: "gated",
        title: "Gated banner",
        riskTier: "high",
        tasks: [
          {
            key: "a",
            paths: ["src/banner.ts"],
            editPlan: [{ op: "write", path: "src/banner.ts", content: "export const banner = 'Hi';\n" }],
          },
        ],
      });
      const first = await waitUntil(
        "the gated Candidate verified on S0",
        () => t.db.candidate.findFirst({ where: { changeId: gated, status: "verified" } }),
        (c) => c !== null,
        LIMIT,
      );
      if (!first?.composedTree) throw new Error("no composed tree");
      expect(first.approvalRequired).toBe(true);
      expect(await approvalInterdiff(t.db, w.blobs, { tenantId: "ten_a", candidateId: first.id })).toBeNull();
      await decideCandidateApproval(
        t.db,
        {
          tenantId: "ten_a",
          candidateId: first.id,
          userId: "usr_approver",
          kind: "granted",
          treeHash: first.composedTree,
        },
        w.deps,
      );

      // Another Change adds src/x.ts and lands: the approved Candidate is stale and recomposed on S1.
      await lands(w, projectId, "adds-x", "write", "src/x.ts");
      const second = await waitUntil(
        "the gated Change recomposed and verified on S1",
        () => t.db.candidate.findFirst({ where: { changeId: gated, baseGeneration: 1 } }),
        (c) => c?.status === "verified",
        LIMIT,
      );
      if (!second) throw new Error("no second Candidate");
      expect(second.composedTree).not.toBe(first.composedTree);
      expect(await t.db.approval.findUnique({ where: { candidateId: second.id } })).toBeNull();
      const requested = await t.db.outboxRow.count({
        where: { eventType: "approval.requested", envelope: { path: ["payload", "candidateId"], equals: second.id } },
      });
      expect(requested).toBe(1);
      const diff = await approvalInterdiff(t.db, w.blobs, { tenantId: "ten_a", candidateId: second.id });
      expect(diff).toMatchObject({
        since: { candidateId: first.id, approvedBy: "usr_approver", treeHash: first.composedTree, baseGeneration: 0 },
        treeIdentical: false,
        sameChangeSets: true,
        ownDiff: { unchanged: true, differingFiles: [] },
        base: {
          fromGeneration: 0,
          toGeneration: 1,
          promotions: [{ generation: 1, title: "write src/x.ts" }],
          files: [{ path: "src/x.ts", underChange: false }],
        },
      });

      // A third Change deletes src/x.ts: S2's tree is S0's again, so the recomposed tree is the one
      // approved on S0 and keeps that approval; turned on, landing needs nobody.
      await lands(w, projectId, "drops-x", "delete", "src/x.ts");
      const third = await waitUntil(
        "the gated Change recomposed and verified on S2",
        () => t.db.candidate.findFirst({ where: { changeId: gated, baseGeneration: 2 } }),
        (c) => c?.status === "verified",
        LIMIT,
      );
      expect(third?.composedTree).toBe(first.composedTree);
      const carried = await t.db.approval.findUniqueOrThrow({ where: { candidateId: third?.id ?? "" } });
      expect(carried).toMatchObject({ decision: "granted", treeHash: first.composedTree, decidedBy: "usr_approver" });
      expect(carried.note).toContain(`carried over from ${first.id}`);
      const granted = await t.db.outboxRow.findMany({
        where: { eventType: "approval.granted", envelope: { path: ["payload", "candidateId"], equals: third?.id } },
      });
      expect(granted.map((r) => (r.envelope as { payload: { carriedFrom?: string } }).payload.carriedFrom)).toEqual([
        first.id,
      ]);
      await setLandWhenReady(t.db, { tenantId: "ten_a", changeId: gated, on: true, actorId: "usr_dev" }, w.deps);
      await waitForPromoted(w, [gated]);
    },
    LIMIT,
  );
});
