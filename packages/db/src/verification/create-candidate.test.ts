import { buildEvent, candidateIdFromKey, compositionKey, loadConfig, streamIndex } from "@rhumbatron/core";
import { appendToOutbox, consumeOnce, pgNotifyNudger, postgresStreamSink, publishDue } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { seedChange, seedProjects, useTestDatabase } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import { causalRouterSubscription } from "../work-graph/causal-router.ts";
import { createCandidate } from "./create-candidate.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
const deps = { config, nudger: pgNotifyNudger, now: () => new Date() };

describe("compositionKey", () => {
  it("is deterministic and separates its fields", () => {
    const k = compositionKey("proj_1", 0, "c0", ["cs_a", "cs_b"]);
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(compositionKey("proj_1", 0, "c0", ["cs_a", "cs_b"])).toBe(k);
    expect(compositionKey("proj_1", 0, "c0", ["cs_b", "cs_a"])).not.toBe(k);
    expect(compositionKey("proj_1", 0, "c0", ["cs_acs_b"])).not.toBe(k);
    expect(compositionKey("proj_1", 1, "c0", ["cs_a", "cs_b"])).not.toBe(k);
    expect(candidateIdFromKey(k)).toBe(`cand_${k.slice(0, 32)}`);
  });
});

describe("candidate.create", () => {
  it("creates one Candidate per composition and starts its verification once; canonical.advanced makes it stale", async () => {
    await seedProjects(t.db, ["proj_c1"]);
    await seedChange(t.db, "proj_c1", "chg_c1");
    await t.db.canonicalGeneration.create({ data: { projectId: "proj_c1", generation: 0, commit: "c0", tree: "t0" } });
    await t.db.task.create({ data: { id: "task_c1", changeId: "chg_c1", key: "a", title: "a", state: "completed" } });
    await t.db.changeSet.create({
      data: {
        id: "cs_c1",
        changeId: "chg_c1",
        taskId: "task_c1",
        runId: "run_c1",
        agentId: "agt",
        fork: "ws-x",
        baseCommit: "c0",
        commit: "c1",
      },
    });
    const first = await withTransaction(t.db, (ctx) => createCandidate(ctx, "chg_c1", deps, null));
    const again = await withTransaction(t.db, (ctx) => createCandidate(ctx, "chg_c1", deps, null));
    expect(first.created).toBe(true);
    expect(again).toEqual({ candidateId: first.candidateId, created: false });
    expect(first.candidateId).toBe(candidateIdFromKey(compositionKey("proj_c1", 0, "c0", ["cs_c1"])));
    expect(await t.db.candidate.count()).toBe(1);
    expect(await t.db.queueMessage.count({ where: { commandId: `cmd_${first.candidateId}_verify` } })).toBe(1);
    expect(await t.db.outboxRow.count({ where: { eventType: "candidate.created" } })).toBe(1);

    // Canonical moves to S1 from another Candidate: the router marks this one stale.
    await t.db.project.update({ where: { id: "proj_c1" }, data: { canonicalGeneration: 1 } });
    await withTransaction(t.db, (ctx) =>
      appendToOutbox(
        ctx,
        [
          buildEvent({
            eventId: `evt_${"a".repeat(32)}`,
            eventType: "canonical.advanced",
            tenantId: "ten_test",
            projectId: "proj_c1",
            actor: { kind: "system", id: "promoter" },
            resource: "project:proj_c1",
            canonicalGeneration: 1,
            correlationId: "proj_c1",
            timestamp: new Date(),
            payload: { candidateId: "cand_other", fromGeneration: 0, toGeneration: 1, treeHash: "t1" },
          }),
        ],
        deps,
      ),
    );
    await publishDue(t.db, { config, sink: postgresStreamSink, nudger: pgNotifyNudger, now: () => new Date() });
    const sub = causalRouterSubscription({
      ...deps,
      classifier: {
        name: "abstain",
        classify: async () => ({ decision: "abstain", probability: 0, model: "none", reason: "" }),
      },
    });
    await consumeOnce(t.db, sub, streamIndex("proj_c1", config.streams.count), {
      config,
      now: () => new Date(),
      owner: "t",
    });
    expect(await t.db.candidate.findUniqueOrThrow({ where: { id: first.candidateId } })).toMatchObject({
      status: "stale",
    });
    expect(await t.db.outboxRow.count({ where: { eventType: "candidate.stale" } })).toBe(1);
    expect(await t.db.queueMessage.count({ where: { commandType: "index.build" } })).toBe(1);
  });

  it("refuses a Change with unfinished Tasks", async () => {
    await seedProjects(t.db, ["proj_c2"]);
    await seedChange(t.db, "proj_c2", "chg_c2");
    await t.db.task.create({ data: { id: "task_c2", changeId: "chg_c2", key: "a", title: "a", state: "running" } });
    await expect(withTransaction(t.db, (ctx) => createCandidate(ctx, "chg_c2", deps, null))).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
  });
});
