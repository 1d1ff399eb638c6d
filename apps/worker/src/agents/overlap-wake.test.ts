import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type EditStep, loadConfig } from "@rhumbatron/core";
import { cancelChange } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { hostRunDir } from "../sandbox/workspace.ts";
import { stoppedAfterEach } from "../test-hooks.ts";
import {
  createScriptedChange,
  fastChecksPolicy,
  provisionedProject,
  startFullWorker,
  testWorld,
  WHOLE_WORKER_LIMIT,
  waitUntil,
} from "../test-world.ts";

/**
 * Intents, claims and challenges on the whole worker (docs/agents.md, Intents, claims and challenges): three
 * Changes whose Tasks intend to touch the same file. The Agent holding it is woken by each newcomer
 * (once per newcomer, though its intent, its claim and its challenge all name the file); each wake
 * reaches the Agent's run, which checks it again and goes on, or stops and says why.
 */
const t = useTestDatabase();
const running = stoppedAfterEach();

const SHARED = "src/shared.ts";
const GATE = "gate";
/** A step that waits in the Sandbox until the test opens the gate in the run's workspace, then removes it. */
const gated: EditStep[] = [
  {
    op: "run",
    argv: [
      "node",
      "-e",
      `const fs = require("fs"); const end = Date.now() + 600000;
       while (!fs.existsSync("${GATE}") && Date.now() < end) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
       process.exit(fs.existsSync("${GATE}") ? 0 : 3);`,
    ],
  },
  { op: "delete", path: GATE },
];

describe("an overlap wake, end to end", () => {
  it("wakes the holder once per newcomer; the woken run re-checks and goes on, or stops with its reason", async () => {
    // The gated steps wait for the test, so the Sandbox may let a command run that long.
    // One Agent run at a time: the woken run re-checks after the cancel it is told of (with several
    // lanes the order of the runs, and so what each re-check finds, is not fixed).
    const w = await testWorld(
      t.db,
      loadConfig("dev", { sandbox: { commandTimeoutSeconds: 900 }, worker: { agentRunsAtOnce: 1 } }),
    );
    const projectId = await provisionedProject(w);
    running.push(await startFullWorker(w, t.url, { policy: fastChecksPolicy() }));
    const wait = <T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean) =>
      waitUntil(what, probe, ok, WHOLE_WORKER_LIMIT);

    const change = (key: string, steps: EditStep[]) =>
      createScriptedChange(w, projectId, {
        requestId: key,
        title: `Task ${key}`,
        tasks: [{ key, paths: [SHARED], editPlan: steps }],
      });
    const taskOf = (changeId: string) => t.db.task.findFirstOrThrow({ where: { changeId } });
    const dispatchRun = async (changeId: string) =>
      t.db.agentRun.findFirstOrThrow({ where: { changeId, reason: "dispatch" } });
    /** The woken runs of `taskId`'s Agent, by the Task that caused them. */
    const wokenRuns = async (taskId: string) => {
      const runs = await t.db.agentRun.findMany({
        where: { taskId, reason: { not: "dispatch" } },
        orderBy: { createdAt: "asc" },
      });
      return runs.map((r) => ({ ...r, cause: (r.wake as { causeTaskId?: string; causeType?: string } | null) ?? {} }));
    };
    const openGate = async (changeId: string) =>
      writeFileSync(
        join(hostRunDir(join(w.dir, "sandboxes"), { projectId, dirName: (await dispatchRun(changeId)).id }), GATE),
        "",
      );
    const routed = async (type: string, taskId: string) => {
      const e = await t.db.outboxRow.findFirst({
        where: { eventType: type, envelope: { path: ["taskId"], equals: taskId } },
      });
      return e
        ? (await t.db.processedEvent.count({ where: { consumer: "causal-router", eventId: e.eventId } })) === 1
        : false;
    };

    // A holds src/shared.ts and works (its run waits at its gate).
    const x = await change("a", [{ op: "write", path: SHARED, content: "export const shared = 'a';\n" }, ...gated]);
    const a = await taskOf(x);
    await wait(
      "A's run to start and its claim to be routed",
      async () => {
        const run = await dispatchRun(x).catch(() => null);
        return run?.startCommit != null && (await routed("claim.acquired", a.id));
      },
      (ok) => ok,
    );

    // B means to touch the same file: A is woken, and A's running work takes the wake and goes on.
    const y = await change("b", [{ op: "write", path: "src/b.ts", content: "export const b = 1;\n" }, ...gated]);
    const b = await taskOf(y);
    const [byB] = await wait(
      "A's wake by B to reach A",
      () => wokenRuns(a.id),
      (r) => r[0]?.status === "completed",
    );
    expect(byB).toMatchObject({
      reason: "exact_overlap",
      cause: { causeTaskId: b.id },
      note: "continued: task b holds src/shared.ts, which this Task also touches; whichever Change lands second is recomposed on the first",
    });

    // C too: A and B (whose run waits behind A's) are woken. A goes on; then C's Change is cancelled.
    const z = await change("c", [{ op: "write", path: "src/c.ts", content: "export const c = 1;\n" }]);
    const c = await taskOf(z);
    await wait(
      "A's wake by C to reach A, and B's wake by C to be queued",
      async () => ({ a: await wokenRuns(a.id), b: await wokenRuns(b.id) }),
      (r) => r.a[1]?.status === "completed" && r.b.some((x) => x.cause.causeTaskId === c.id),
    );
    expect((await wokenRuns(a.id))[1]).toMatchObject({
      cause: { causeTaskId: c.id },
      note: expect.stringMatching(/^continued: task c holds src\/shared\.ts/),
    });
    await cancelChange(t.db, { tenantId: "ten_a", changeId: z, actorId: "usr_test", reason: "not needed" }, w.deps);

    // A finishes; its ChangeSet wakes B. B's run starts: C's wake is stale now, A's still matters.
    await openGate(x);
    const woken = await wait(
      "B's wakes to reach B",
      () => wokenRuns(b.id),
      (r) => r.length === 2 && r.every((x) => x.status === "completed"),
    );
    expect(woken.map((r) => [r.cause.causeTaskId, r.cause.causeType, r.note])).toEqual([
      [c.id, "intent.declared", "stopped: task c's Change was cancelled: nothing of it will land"],
      [
        a.id,
        "changeset.published",
        "continued: task a changed src/shared.ts, which this Task also touches; whichever Change lands second is recomposed on the first",
      ],
    ]);
    await openGate(y);
    await wait(
      "B to complete",
      () => taskOf(y),
      (task) => task.state === "completed",
    );

    // On the stream, once each: every Task's intent, claim and release; one dispatch per Change;
    // the three challenges (B's claim against A, C's against A and B); four wakes reached an Agent.
    const entries = await wait(
      "the events on the stream",
      () => t.db.streamEntry.findMany({ where: { projectId }, orderBy: { offset: "asc" } }),
      (e) =>
        e.filter((x) => x.eventType === "agent.woken").length === 4 &&
        e.filter((x) => x.eventType === "claim.released").length === 3,
    );
    const names = new Map([a, b, c].map((task) => [task.id, task.key]));
    const seen = (type: string) =>
      entries
        .filter((e) => e.eventType === type)
        .map((e) => {
          const env = e.envelope as {
            taskId: string | null;
            payload: { heldBy?: { taskId: string }; stale?: boolean };
          };
          const holder = env.payload.heldBy ? `>${names.get(env.payload.heldBy.taskId)}` : "";
          const stale = env.payload.stale === undefined ? "" : env.payload.stale ? " stale" : " relevant";
          return `${names.get(env.taskId ?? "") ?? "-"}${holder}${stale}`;
        })
        .sort();
    expect(seen("change.dispatched")).toEqual(["-", "-", "-"]);
    for (const type of ["intent.declared", "claim.acquired", "claim.released"])
      expect(seen(type)).toEqual(["a", "b", "c"]);
    expect(seen("challenge.raised")).toEqual(["b>a", "c>a", "c>b"]);
    expect(seen("agent.woken")).toEqual(["a relevant", "a relevant", "b relevant", "b stale"]);
    expect(new Set(entries.map((e) => e.eventId)).size).toBe(entries.length);
    // No woken run was left unread or ended without a reason.
    const all = await t.db.agentRun.findMany({ where: { reason: { not: "dispatch" }, change: { projectId } } });
    expect(all.map((r) => [r.status, r.note?.split(":")[0]]).sort()).toEqual([
      ["completed", "continued"],
      ["completed", "continued"],
      ["completed", "continued"],
      ["completed", "stopped"],
    ]);
  }, 900_000);
});
