import { DEFAULT_COMMAND_ALLOWLIST, scriptedProvider } from "@rhumbatron/core";
import { changeSetOfRun, openReservation } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { createScriptedChange, provisionedProject, runTaskDirectly, testWorld } from "../test-world.ts";
import { executeRun } from "./runner.ts";

/**
 * A runner whose Agent run another worker took over while it worked (its beat was late on a busy
 * machine: packages/runtime/src/leases/holders.ts) records nothing when it ends: no ChangeSet, no
 * finish, no meter settled (packages/db/src/work-graph/run-fence.ts). The taker's execution of the
 * same run completes the Task once.
 */
const t = useTestDatabase();

describe("a runner whose run was taken over while its Agent worked", () => {
  it("ends as superseded having recorded nothing; the taker completes the Task once", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const changeId = await createScriptedChange(w, projectId, {
      requestId: "superseded",
      title: "Add a",
      tasks: [
        {
          key: "a",
          paths: ["src/a.ts"],
          editPlan: [{ op: "write", path: "src/a.ts", content: "export const a = 1;\n" }],
        },
      ],
    });
    const task = await t.db.task.findFirstOrThrow({ where: { changeId } });
    const runId = "run_5b0f6a3e-0c0d-4e59-9d43-2f1c8f1e7a10";
    // Another worker claims the run (a new epoch) after this runner's Agent has done its work.
    const takeOver = async () => {
      await t.db.agentRun.update({
        where: { id: runId },
        data: { runnerEpoch: { increment: 1 }, runnerId: "wrk_taker" },
      });
    };
    const first = await runTaskDirectly(w, task, { afterTools: takeOver }, runId);
    expect(first.result).toMatchObject({ outcome: "skipped", detail: expect.stringMatching(/^superseded: run /) });
    const recorded = async () => ({
      run: await t.db.agentRun.findUniqueOrThrow({ where: { id: runId }, select: { status: true, runnerId: true } }),
      task: (await t.db.task.findUniqueOrThrow({ where: { id: task.id } })).state,
      changeSet: (await changeSetOfRun(t.db, runId)) !== null,
      events: (await t.db.outboxRow.findMany({ where: { projectId }, select: { eventType: true } }))
        .map((e) => e.eventType)
        .filter((type) => type === "changeset.published" || type.startsWith("task.")),
    });
    expect(await recorded()).toEqual({
      run: { status: "running", runnerId: "wrk_taker" },
      task: "running",
      changeSet: false,
      events: [],
    });
    // The meter's reservation is the taker's to settle.
    expect(await openReservation(t.db, `sbxres_${runId}`, { kind: "agent", changeId }, w.config)).not.toBeNull();

    // The taker executes the run in its epoch: it completes the Task, once.
    const taker = await executeRun(
      { ...w.deps, sandbox: w.sandbox, provider: scriptedProvider, allowlist: [...DEFAULT_COMMAND_ALLOWLIST] },
      runId,
    );
    expect(taker.outcome).toBe("completed");
    expect(await recorded()).toEqual({
      run: { status: "completed", runnerId: "wrk_taker" },
      task: "completed",
      changeSet: true,
      events: ["changeset.published", "task.completed"],
    });
  });
});
