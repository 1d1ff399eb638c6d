import { randomUUID } from "node:crypto";
import { buildEvent, loadConfig, type RhumbatronConfig, streamIndex } from "@rhumbatron/core";
import {
  appendToOutbox,
  consumeOnce,
  consumeQueue,
  pgNotifyNudger,
  postgresStreamSink,
  publishDue,
} from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { seedChange, seedProjects, useTestDatabase } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import { causalRouterSubscription } from "../work-graph/causal-router.ts";
import { candidateCreateHandler, createCandidate } from "./create-candidate.ts";

const t = useTestDatabase();
const abstain = {
  name: "abstain",
  classify: async () => ({ decision: "abstain" as const, probability: 0, model: "none", reason: "" }),
};

/** A project at S0 with a Change (one completed Task, one ChangeSet) waiting in verification, and its first Candidate. */
async function world(project: string, config: RhumbatronConfig, now: () => Date) {
  const deps = { config, nudger: pgNotifyNudger, now };
  const change = `chg_${project}`;
  await seedProjects(t.db, [project]);
  await seedChange(t.db, project, change);
  await t.db.change.update({ where: { id: change }, data: { status: "verifying" } });
  await t.db.canonicalGeneration.create({ data: { projectId: project, generation: 0, commit: "c0", tree: "t0" } });
  await t.db.task.create({
    data: { id: `task_${project}`, changeId: change, key: "a", title: "a", state: "completed" },
  });
  await t.db.changeSet.create({
    data: {
      id: `cs_${project}`,
      changeId: change,
      taskId: `task_${project}`,
      runId: `run_${project}`,
      agentId: "agt",
      fork: "ws-x",
      baseCommit: "c0",
      commit: "c1",
    },
  });
  const first = await withTransaction(t.db, (ctx) => createCandidate(ctx, change, deps, null));
  return { deps, change, first: first.candidateId ?? "" };
}

/** Another Change of the project is promoted: S<n> records its Candidate and canonical.advanced is written. */
async function promoteAnother(
  project: string,
  generation: number,
  deps: { config: RhumbatronConfig; now: () => Date },
) {
  const other = `chg_other_${project}_${generation}`;
  await seedChange(t.db, project, other);
  const cand = `cand_other${generation}_${project}`;
  await t.db.candidate.create({
    data: {
      id: cand,
      projectId: project,
      changeId: other,
      compositionKey: `k_${cand}`,
      baseGeneration: generation - 1,
      baseCommit: "x",
      status: "promoted",
    },
  });
  await t.db.canonicalGeneration.create({
    data: { projectId: project, generation, commit: `c${generation}`, tree: `t${generation}`, candidateId: cand },
  });
  await t.db.project.update({ where: { id: project }, data: { canonicalGeneration: generation } });
  await withTransaction(t.db, (ctx) =>
    appendToOutbox(
      ctx,
      [
        buildEvent({
          eventId: `evt_${randomUUID().replace(/-/g, "")}`,
          eventType: "canonical.advanced",
          tenantId: "ten_test",
          projectId: project,
          actor: { kind: "system", id: "promoter" },
          resource: `project:${project}`,
          canonicalGeneration: generation,
          correlationId: project,
          timestamp: deps.now(),
          payload: { candidateId: cand, fromGeneration: generation - 1, toGeneration: generation, treeHash: "t" },
        }),
      ],
      { ...deps, nudger: pgNotifyNudger },
    ),
  );
  return other;
}

/** Publishes and routes every Event until the stream is quiet. */
async function route(project: string, deps: { config: RhumbatronConfig; now: () => Date }) {
  const sub = causalRouterSubscription({ ...deps, nudger: pgNotifyNudger, classifier: abstain });
  for (let i = 0; i < 20; i++) {
    await publishDue(t.db, { config: deps.config, sink: postgresStreamSink, nudger: pgNotifyNudger, now: deps.now });
    const r = await consumeOnce(t.db, sub, streamIndex(project, deps.config.streams.count), { ...deps, owner: "t" });
    if (r.outcome === "empty") return;
  }
}

/** Runs the integration queue until nothing more is available now. */
async function integrate(deps: { config: RhumbatronConfig; now: () => Date }) {
  const full = { ...deps, nudger: pgNotifyNudger };
  for (let i = 0; i < 10; i++) {
    const r = await consumeQueue(t.db, "integration", [candidateCreateHandler(full)], { ...full, owner: "t" });
    if (r.leased === 0) return;
  }
}

describe("stale Candidates recompose themselves", () => {
  it("a promotion of another Change makes the Candidate stale and composes a new one on the new generation, once", async () => {
    const config = loadConfig("dev");
    const { deps, change, first } = await world("proj_r1", config, () => new Date());
    const other = await promoteAnother("proj_r1", 1, deps);
    await route("proj_r1", deps);
    expect((await t.db.candidate.findUniqueOrThrow({ where: { id: first } })).status).toBe("stale");
    expect(await t.db.queueMessage.count({ where: { commandId: `cmd_recompose_${change}_S1_${first}` } })).toBe(1);

    await integrate(deps);
    const fresh = await t.db.candidate.findFirstOrThrow({ where: { changeId: change, baseGeneration: 1 } });
    expect(fresh).toMatchObject({
      status: "created",
      baseCommit: "c1",
      changeSetIds: ["cs_proj_r1"],
      recomposedFrom: first,
      recomposeReason: `recomposed on generation 1 after ${other} was promoted`,
    });
    const created = await t.db.outboxRow.findMany({ where: { eventType: "candidate.created" } });
    expect(created.map((r) => (r.envelope as { payload: { reason?: string } }).payload.reason)).toContain(
      `recomposed on generation 1 after ${other} was promoted`,
    );
    // Its verification starts like any Candidate's.
    expect(await t.db.queueMessage.count({ where: { commandId: `cmd_${fresh.id}_verify` } })).toBe(1);

    // The stale Event delivered again (a redelivery) and the command sent again create nothing more.
    await t.db.processedEvent.deleteMany({});
    await t.db.streamCursor.updateMany({ data: { committedOffset: 0 } });
    await route("proj_r1", deps);
    await integrate(deps);
    expect(await t.db.candidate.count({ where: { changeId: change } })).toBe(2);
  });

  it("does nothing for a Change that has moved on (promoted or cancelled)", async () => {
    const config = loadConfig("dev");
    const { deps, change } = await world("proj_r2", config, () => new Date());
    await t.db.change.update({ where: { id: change }, data: { status: "cancelled" } });
    await promoteAnother("proj_r2", 1, deps);
    await route("proj_r2", deps);
    await integrate(deps);
    expect(await t.db.candidate.count({ where: { changeId: change } })).toBe(1);
  });

  it("holds a recomposition past the hourly limit, says why on the Change, and composes when the window allows", async () => {
    const base = loadConfig("dev");
    const config = { ...base, integration: { ...base.integration, recompositionsPerChangePerHour: 2 } };
    let now = new Date("2030-03-01T10:00:00.000Z");
    const clock = () => now;
    const { deps, change } = await world("proj_r3", config, clock);
    now = new Date("2030-03-01T10:10:00.000Z");
    await promoteAnother("proj_r3", 1, deps);
    await route("proj_r3", deps);
    await integrate(deps);
    expect(await t.db.candidate.count({ where: { changeId: change } })).toBe(2);

    now = new Date("2030-03-01T10:20:00.000Z");
    await promoteAnother("proj_r3", 2, deps);
    await route("proj_r3", deps);
    await integrate(deps);
    // Two Candidates within the hour: the third waits for the first to leave the window (11:00).
    expect(await t.db.candidate.count({ where: { changeId: change } })).toBe(2);
    const held = await t.db.outboxRow.findFirstOrThrow({ where: { eventType: "candidate.recomposition_held" } });
    expect((held.envelope as { payload: { reason: string } }).payload.reason).toBe(
      "held: 2 Candidates in the last hour reach the limit of 2 per Change; recomposes at 2030-03-01T11:00:00.000Z",
    );
    const waiting = await t.db.queueMessage.findFirstOrThrow({ where: { commandType: "candidate.create" } });
    expect(waiting.availableAt).toEqual(new Date("2030-03-01T11:00:00.000Z"));

    await integrate(deps); // too early: nothing is leased
    expect(await t.db.candidate.count({ where: { changeId: change } })).toBe(2);
    now = new Date("2030-03-01T11:00:01.000Z");
    await integrate(deps);
    const third = await t.db.candidate.findFirstOrThrow({ where: { changeId: change, baseGeneration: 2 } });
    expect(third.recomposeReason).toMatch(/^recomposed on generation 2 after chg_other_proj_r3_2 was promoted$/);
  });
});
