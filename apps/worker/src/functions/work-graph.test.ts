import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  commandCapWindow,
  loadConfig,
  type OverlapClassifier,
  type OverlapQuestion,
  streamIndex,
} from "@rhumbatron/core";
import {
  CAUSAL_ROUTER,
  causalRouterSubscription,
  createChange,
  finishTask,
  localFolderBlobStore,
} from "@rhumbatron/db";
import { seedProjects, testEvent, useTestDatabase } from "@rhumbatron/db/testing";
import {
  appendToOutbox,
  consumeOnce,
  pgNotifyNudger,
  postgresStreamSink,
  publishDue,
  withTransaction,
} from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import type { LocalExecutor } from "../executors/local.ts";
import { stoppedAfterEach } from "../test-hooks.ts";
import { captureLogs, startNudgeOnlyExecutor, testConfig } from "../testing.ts";
import { buildFunctions } from "./index.ts";

const t = useTestDatabase();
const running = stoppedAfterEach<LocalExecutor>();
const deps = { config: testConfig, nudger: pgNotifyNudger, now: () => new Date() };

async function startWorker() {
  const logs = captureLogs();
  const functions = buildFunctions({
    config: testConfig,
    nudger: pgNotifyNudger,
    blobs: localFolderBlobStore(mkdtempSync(join(tmpdir(), "rh-blobs-"))),
  });
  const executor = await startNudgeOnlyExecutor({ db: t.db, databaseUrl: t.url, logs, functions });
  running.push(executor);
  return { executor, logs };
}

async function until<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, ms = 100_000): Promise<T> {
  const end = Date.now() + ms;
  let last: T = await probe();
  while (!ok(last)) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 40));
    last = await probe();
  }
  return last;
}

/**
 * What of a project's work is still to be processed, read in one statement (so one snapshot): its
 * outbox rows not yet published, its stream entries the causal router has not routed (no
 * processed_events row of its own), and its commands on any queue. Every step of the Work Graph
 * commits its effects with the thing it consumed (the router its processed_events rows and the
 * commands it sends; a queue handler its rows, its Events and the ack that deletes the message), so
 * all three at zero means every Event and command written so far was fully handled, and with the
 * executor's cron timers off nothing runs again unless a new row arrives.
 */
async function pending(projectId: string) {
  const [row] = await t.db.$queryRaw<{ unpublished: number; unrouted: number; queued: number; routedStarts: number }[]>`
    SELECT
      (SELECT count(*)::int FROM outbox WHERE project_id = ${projectId} AND state <> 'published') AS unpublished,
      (SELECT count(*)::int FROM stream_entries e WHERE e.project_id = ${projectId} AND NOT EXISTS (
        SELECT 1 FROM processed_events p WHERE p.consumer = ${CAUSAL_ROUTER} AND p.event_id = e.event_id)) AS unrouted,
      (SELECT count(*)::int FROM queue_messages WHERE project_id = ${projectId}) AS queued,
      (SELECT count(*)::int FROM stream_entries e JOIN processed_events p
        ON p.consumer = ${CAUSAL_ROUTER} AND p.event_id = e.event_id
        WHERE e.project_id = ${projectId} AND e.event_type = 'task.started') AS "routedStarts"`;
  if (!row) throw new Error("no row");
  return row;
}

/** Until everything written for the project so far has been processed (see pending). */
function settled(projectId: string) {
  return until(
    `${projectId} settled`,
    () => pending(projectId),
    (p) => p.unpublished === 0 && p.unrouted === 0 && p.queued === 0,
  );
}

const states = async (changeId: string) =>
  Object.fromEntries(
    (await t.db.task.findMany({ where: { changeId }, orderBy: { position: "asc" } })).map((x) => [x.key, x.state]),
  );

async function runOf(changeId: string, key: string) {
  const task = await t.db.task.findFirstOrThrow({ where: { changeId, key } });
  const run = await t.db.agentRun.findFirstOrThrow({ where: { taskId: task.id }, orderBy: { createdAt: "asc" } });
  return { taskId: task.id, runId: run.id, agentId: run.agentId };
}

describe("the Work Graph end to end, with the local executor", () => {
  it("runs a -> (b, c) from change.create to verification.started", async () => {
    await seedProjects(t.db, ["proj_wg1"]);
    await t.db.canonicalGeneration.create({ data: { projectId: "proj_wg1", generation: 0, commit: "c0", tree: "t0" } });
    await startWorker();
    const req = {
      tenantId: "ten_test",
      projectId: "proj_wg1",
      clientRequestId: "req-1",
      createdBy: { kind: "user" as const, id: "usr_1" },
      input: {
        title: "Add a wishlist",
        riskTier: "medium" as const,
        description: "",
        goals: {},
        invariants: [],
        contractChanges: { added: [], removed: [], changed: [] },
        tasks: [
          { key: "a", title: "Model", dependsOn: [], intents: { paths: ["src/wishlist.ts"], prefixes: [] } },
          { key: "b", title: "API", dependsOn: ["a"], intents: { paths: ["src/api.ts"], prefixes: [] } },
          { key: "c", title: "UI", dependsOn: ["a"], intents: { paths: ["src/ui.tsx"], prefixes: [] } },
        ],
      },
    };
    const { changeId, created } = await createChange(t.db, req, deps);
    expect(created).toBe(true);
    expect(await createChange(t.db, req, deps)).toEqual({ changeId, created: false });

    await until(
      "a running",
      () => states(changeId),
      (s) => s.a === "running",
    );
    expect(await states(changeId)).toEqual({ a: "running", b: "pending", c: "pending" });
    const a = await runOf(changeId, "a");
    expect(a.agentId).toBe(`agt_${a.taskId}`);
    await finishTask(t.db, { taskId: a.taskId, runId: a.runId, agentId: a.agentId, outcome: "completed" }, deps);

    // b and c are dispatched in parallel by the causal router's change.dispatch.
    await until(
      "b and c running",
      () => states(changeId),
      (s) => s.b === "running" && s.c === "running",
    );
    for (const key of ["b", "c"]) {
      const r = await runOf(changeId, key);
      await finishTask(t.db, { taskId: r.taskId, runId: r.runId, agentId: r.agentId, outcome: "completed" }, deps);
    }
    expect(await t.db.change.findUniqueOrThrow({ where: { id: changeId } })).toMatchObject({ status: "verifying" });

    // The events on the stream, in order for this Change.
    const stream = streamIndex("proj_wg1", testConfig.streams.count);
    const entries = await until(
      "verification.started on the stream",
      () =>
        t.db.streamEntry.findMany({
          where: { streamIndex: stream, projectId: "proj_wg1" },
          orderBy: { offset: "asc" },
        }),
      (e) => e.some((x) => x.eventType === "verification.started"),
    );
    const types = entries.map((e) => e.eventType);
    expect(types[0]).toBe("change.created");
    // The first dispatch is recorded once; each Task declares its intents before its Agent starts,
    // claims them when its Agent takes it, and releases them when it is done.
    expect(types.slice(1, 8)).toEqual([
      "task.ready",
      "change.dispatched",
      "intent.declared",
      "task.started",
      "claim.acquired",
      "task.completed",
      "claim.released",
    ]);
    const count = (type: string) => types.filter((x) => x === type).length;
    expect(["task.ready", "task.started", "intent.declared", "claim.acquired", "claim.released"].map(count)).toEqual([
      3, 3, 3, 3, 3,
    ]);
    // Three Tasks on three different files: nobody is challenged or woken.
    expect(["change.dispatched", "challenge.raised", "agent.woken", "model.routed"].map(count)).toEqual([1, 0, 0, 0]);
    expect(types.at(-1)).toBe("verification.started");
    expect(types.indexOf("task.ready", 4)).toBeGreaterThan(types.indexOf("task.completed"));

    // The causal router sent candidate.create: the Candidate is composed on S0 and its
    // verification workflow instance is started (instance ID = Candidate ID).
    const candidate = await until(
      "the Candidate",
      () => t.db.candidate.findFirst({ where: { changeId } }),
      (c) => c !== null,
    );
    expect(candidate).toMatchObject({ baseGeneration: 0, status: "created" });
    expect(candidate?.id).toMatch(/^cand_[0-9a-f]{32}$/);
    await until(
      "its workflow instance",
      () => t.db.workflowInstance.findUnique({ where: { instanceId: candidate?.id ?? "" } }),
      (w) => w !== null,
    );
    // Every wake became exactly one run.
    expect(await t.db.agentRun.count({ where: { changeId } })).toBe(3);
    expect(await t.db.metricPoint.count({ where: { name: "agent_wakeup", projectId: "proj_wg1" } })).toBe(3);
  });

  it("keeps at most 8 Agents active on 10 ready Tasks and fills a freed slot", async () => {
    await seedProjects(t.db, ["proj_wg2"]);
    await startWorker();
    const tasks = Array.from({ length: 10 }, (_, i) => ({
      key: `t${i}`,
      title: `Task ${i}`,
      dependsOn: [],
      intents: { paths: [], prefixes: [] },
    }));
    const { changeId } = await createChange(
      t.db,
      {
        tenantId: "ten_test",
        projectId: "proj_wg2",
        clientRequestId: "req-2",
        createdBy: { kind: "user", id: "usr_1" },
        input: {
          title: "Wide",
          riskTier: "low",
          description: "",
          goals: {},
          invariants: [],
          contractChanges: { added: [], removed: [], changed: [] },
          tasks,
        },
      },
      deps,
    );
    await until(
      "the slots filled",
      () => states(changeId),
      (x) => Object.values(x).filter((v) => v === "running").length >= 8,
    );
    // Nothing more may start while all slots are taken. Asserted once the system has handled
    // everything the 8 starts caused (their task.started and claim.acquired routed, every command
    // consumed), so a 9th start, whenever it would come, has come.
    const after8 = await settled("proj_wg2");
    expect(after8.routedStarts).toBe(8);
    const s = await states(changeId);
    expect(Object.values(s).filter((v) => v === "running")).toHaveLength(8);
    expect(Object.values(s).filter((v) => v === "ready")).toHaveLength(2);
    // The two waiting Tasks were never woken: no wake sent, no run.
    const waiting = await t.db.task.findMany({ where: { changeId, state: "ready" } });
    expect(waiting.map((x) => x.dispatched)).toEqual([false, false]);
    expect(await t.db.agentRun.count({ where: { changeId } })).toBe(8);

    const first = await runOf(changeId, "t0");
    await finishTask(t.db, { ...first, outcome: "completed" }, deps);
    const after = await until(
      "a waiting Task starts",
      () => states(changeId),
      (x) => Object.values(x).filter((v) => v === "running").length === 8 && x.t0 === "completed",
    );
    expect(Object.values(after).filter((v) => v === "ready")).toHaveLength(1);
  });
});

describe("the overlap classifier's daily cap", () => {
  it("calls at most the cap per day, wakes without a call past it, and starts again the next day", async () => {
    await seedProjects(t.db, ["proj_wg3"]);
    const config = loadConfig("dev", { causal: { classifierDailyCallCap: 2 } });
    let now = new Date("2026-08-01T23:59:00Z");
    const calls: OverlapQuestion[] = [];
    const skipper: OverlapClassifier = {
      name: "test-endpoint",
      classify: async (q) => {
        calls.push(q);
        return { decision: "skip", probability: 0.95, model: "test", reason: "unrelated" };
      },
    };
    // An Agent holding src/cart/ by prefix; Events touching files under it are prefix-only overlaps.
    await t.db.change.create({
      data: { id: "chg_holder", projectId: "proj_wg3", title: "holder", riskTier: "low", clientRequestId: "h" },
    });
    await t.db.task.create({
      data: {
        id: "task_holder",
        changeId: "chg_holder",
        key: "h",
        title: "h",
        state: "running",
        agentId: "agt_holder",
        intents: { paths: [], prefixes: ["src/cart/"] },
      },
    });
    await t.db.change.create({
      data: { id: "chg_other", projectId: "proj_wg3", title: "other", riskTier: "low", clientRequestId: "o" },
    });
    const sub = causalRouterSubscription({ config, nudger: pgNotifyNudger, now: () => now, classifier: skipper });
    const stream = streamIndex("proj_wg3", config.streams.count);
    const emit = async (n: number) => {
      await withTransaction(t.db, (ctx) =>
        appendToOutbox(
          ctx,
          [
            testEvent("claim.acquired", {
              projectId: "proj_wg3",
              changeId: "chg_other",
              key: `k${n}`,
              payload: { agentId: "agt_other", paths: [`src/cart/f${n}.ts`] },
            }),
          ],
          { config, nudger: pgNotifyNudger },
        ),
      );
      await publishDue(t.db, { config, sink: postgresStreamSink, nudger: pgNotifyNudger, now: () => now });
      await consumeOnce(t.db, sub, stream, { config, now: () => now, owner: "test" });
    };
    for (let i = 0; i < 3; i++) await emit(i);
    expect(calls).toHaveLength(2);
    // Skips above the threshold wake nobody; the third, past the cap, wakes without a call.
    const wakes = await t.db.queueMessage.findMany({ where: { queue: "agent-wakeups" } });
    expect(wakes.map((w) => (w.envelope as { payload: { reason: string } }).payload.reason)).toEqual([
      "prefix_overlap",
    ]);
    expect(await t.db.metricPoint.count({ where: { name: "model_route", projectId: "proj_wg3" } })).toBe(2);
    // Each used verdict is an Event too (model.routed), written with the decision it made.
    const routed = await t.db.outboxRow.findMany({
      where: { eventType: "model.routed", projectId: "proj_wg3" },
      orderBy: { projectSeq: "asc" },
    });
    const verdict = {
      purpose: "overlap_wake",
      model: "test",
      agentId: "agt_holder",
      decision: "skip",
      probability: 0.95,
    };
    expect(routed.map((r) => (r.envelope as { payload: unknown }).payload)).toEqual([verdict, verdict]);
    // Its metric point keeps the probability under the Event's ID: the analytics projector's point
    // for the same Event is a duplicate, so nothing is counted twice.
    const points = await t.db.metricPoint.findMany({ where: { name: "model_route", projectId: "proj_wg3" } });
    expect(points.map((p) => [p.eventId, p.value]).sort()).toEqual(routed.map((r) => [r.eventId, 0.95]).sort());

    now = new Date("2026-08-02T00:01:00Z");
    await emit(3);
    expect(calls).toHaveLength(3);
  });

  it("holds no lock while the model answers: the counter row and the Task rows stay writable", async () => {
    await seedProjects(t.db, ["proj_wg4"]);
    const config = loadConfig("dev");
    const now = new Date("2026-08-03T10:00:00Z");
    let answer: (() => void) | undefined;
    let asked: (() => void) | undefined;
    const wasAsked = new Promise<void>((r) => {
      asked = r;
    });
    const slow: OverlapClassifier = {
      name: "slow-endpoint",
      classify: async () => {
        asked?.();
        await new Promise<void>((r) => {
          answer = r;
        });
        return { decision: "wake", probability: 0.2, model: "test", reason: "maybe related" };
      },
    };
    await t.db.change.create({
      data: { id: "chg_holder4", projectId: "proj_wg4", title: "holder", riskTier: "low", clientRequestId: "h4" },
    });
    await t.db.task.create({
      data: {
        id: "task_holder4",
        changeId: "chg_holder4",
        key: "h",
        title: "h",
        state: "running",
        agentId: "agt_holder4",
        intents: { paths: [], prefixes: ["src/cart/"] },
      },
    });
    // Today's counter row exists (earlier calls), as it does on a busy day.
    await t.db.usageCounter.create({
      data: { counter: "overlap_classifier_calls", scopeId: config.env, window: commandCapWindow(now), count: 1 },
    });
    const sub = causalRouterSubscription({ config, nudger: pgNotifyNudger, now: () => now, classifier: slow });
    await withTransaction(t.db, (ctx) =>
      appendToOutbox(
        ctx,
        [
          testEvent("claim.acquired", {
            projectId: "proj_wg4",
            changeId: "chg_holder4",
            key: "k4",
            payload: { agentId: "agt_other4", paths: ["src/cart/x.ts"] },
          }),
        ],
        { config, nudger: pgNotifyNudger },
      ),
    );
    await publishDue(t.db, { config, sink: postgresStreamSink, nudger: pgNotifyNudger, now: () => now });
    const consuming = consumeOnce(t.db, sub, streamIndex("proj_wg4", config.streams.count), {
      config,
      now: () => now,
      owner: "test",
    });
    await wasAsked;
    // While the model thinks, other writers get the rows at once (a lock would make them wait 2 s, then fail).
    await t.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe("SET LOCAL lock_timeout = '2s'");
      await tx.$executeRaw`UPDATE usage_counters SET count = count WHERE counter = 'overlap_classifier_calls'`;
      await tx.$executeRaw`UPDATE tasks SET updated_at = now() WHERE id = 'task_holder4'`;
    });
    answer?.();
    expect((await consuming).outcome).toBe("ack");
    const wakes = await t.db.queueMessage.findMany({ where: { queue: "agent-wakeups", projectId: "proj_wg4" } });
    expect(wakes).toHaveLength(1);
    expect(await t.db.metricPoint.count({ where: { name: "model_route", projectId: "proj_wg4" } })).toBe(1);
  });
});
