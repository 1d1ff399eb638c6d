import { loadConfig } from "@rhumbatron/core";
import { pgNotifyNudger } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { seedChange, seedProjects, seedVerifiedCandidate, useTestDatabase } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import { cancelChange } from "../work-graph/complete-task.ts";
import { createCandidate } from "./create-candidate.ts";
import { promoteCandidate } from "./promote.ts";

/**
 * A Change that moved on lands nothing more, even when a command about it arrives late: the two
 * faults the promotion model found (docs/model-check.md, What it found).
 */
const t = useTestDatabase();
const config = loadConfig("dev");
const deps = { config, nudger: pgNotifyNudger, now: () => new Date() };

/** A Change whose one Task completed with a ChangeSet on S0, in `status`. */
async function finishedChange(projectId: string, status: "cancelled" | "promoted" | "verifying") {
  const changeId = `chg_${projectId}`;
  await seedProjects(t.db, [projectId]);
  await seedChange(t.db, projectId, changeId);
  await t.db.canonicalGeneration.create({ data: { projectId, generation: 0, commit: "c0", tree: "t0" } });
  const taskId = `task_${projectId}`;
  await t.db.task.create({ data: { id: taskId, changeId, key: "a", title: "a", state: "completed" } });
  await t.db.changeSet.create({
    data: {
      id: `cs_${projectId}`,
      changeId,
      taskId,
      runId: `run_${projectId}`,
      agentId: "agt",
      fork: "ws",
      baseCommit: "c0",
      commit: "c1",
    },
  });
  if (status === "cancelled")
    await cancelChange(t.db, { tenantId: "ten_test", changeId, actorId: "usr", reason: "not wanted" }, deps);
  else await t.db.change.update({ where: { id: changeId }, data: { status } });
  return changeId;
}

const written = async (projectId: string) => ({
  candidates: await t.db.candidate.count({ where: { projectId } }),
  events: await t.db.outboxRow.count({ where: { projectId, eventType: "candidate.created" } }),
  commands: await t.db.queueMessage.count({ where: { commandType: "verification.start" } }),
});

describe("a Change that moved on", () => {
  it("a candidate.create delivered after the cancel composes nothing, and neither does one after it landed", async () => {
    for (const status of ["cancelled", "promoted"] as const) {
      const projectId = `proj_late_${status}`;
      const changeId = await finishedChange(projectId, status);
      const before = await written(projectId);
      const late = await withTransaction(t.db, (ctx) => createCandidate(ctx, changeId, deps, null));
      expect(late).toEqual({ skipped: `the change is ${status}`, created: false });
      expect(await written(projectId)).toEqual({ ...before, candidates: 0, events: 0 });
    }
    // The same command for a Change still verifying does compose (the skip is not for everyone).
    const changeId = await finishedChange("proj_late_live", "verifying");
    const live = await withTransaction(t.db, (ctx) => createCandidate(ctx, changeId, deps, null));
    expect(live.created).toBe(true);
  });

  it("a verified Candidate of a cancelled Change is not promoted: CONFLICT, canonical and the Candidate stay", async () => {
    const projectId = "proj_cancelled_promote";
    const { changeId, candidateId } = await seedVerifiedCandidate(t.db, projectId, config);
    // What a late composition used to leave behind: the Change cancelled, its Candidate verified.
    await t.db.change.update({ where: { id: changeId }, data: { status: "cancelled" } });
    const promotion = promoteCandidate(t.db, { tenantId: "ten_test", candidateId, actorId: "usr_approver" }, deps, {
      commitInCandidateFork: async () => true,
    });
    await expect(promotion).rejects.toMatchObject({
      code: "CONFLICT",
      message: `change ${changeId} is cancelled; its Candidate cannot land`,
    });
    expect((await t.db.project.findUniqueOrThrow({ where: { id: projectId } })).canonicalGeneration).toBe(0);
    expect(await t.db.canonicalGeneration.count({ where: { projectId } })).toBe(1);
    expect((await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } })).status).toBe("verified");
    expect(await t.db.outboxRow.count({ where: { projectId, eventType: "canonical.advanced" } })).toBe(0);
  });
});
