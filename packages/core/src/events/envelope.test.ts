import { describe, expect, it } from "vitest";
import { EVENT_CATALOGUE, EVENT_TYPES, METRIC_FOR_EVENT } from "./catalogue.ts";
import { commandEnvelopeSchema } from "./command.ts";
import { buildEvent, decodeEvent } from "./envelope.ts";
import { stableEventId } from "./event-id.ts";

const base = {
  tenantId: "ten_1",
  projectId: "proj_1",
  changeId: "chg_1",
  taskId: "task_1",
  actor: { kind: "agent" as const, id: "agt_1" },
  resource: "change:chg_1",
  canonicalGeneration: 0,
  causedBy: null,
  correlationId: "chg_1",
  timestamp: new Date("2026-01-01T00:00:00Z"),
};

function taskCompleted() {
  return buildEvent({
    ...base,
    eventId: stableEventId("chg_1", "task.completed", "task_1"),
    eventType: "task.completed",
    payload: { runId: "run_1", changeSetId: "cs_1" },
  });
}

describe("event envelopes", () => {
  it("round-trips through JSON with every key field", () => {
    const e = taskCompleted();
    const decoded = decodeEvent(JSON.parse(JSON.stringify(e)));
    expect(decoded).toEqual({ ok: true, event: e });
    expect(Object.keys(e).sort()).toEqual(
      [
        "eventId",
        "eventType",
        "eventVersion",
        "tenantId",
        "projectId",
        "changeId",
        "taskId",
        "actor",
        "resource",
        "canonicalGeneration",
        "causedBy",
        "correlationId",
        "timestamp",
        "payload",
      ].sort(),
    );
  });

  it("returns typed errors instead of throwing", () => {
    const e = JSON.parse(JSON.stringify(taskCompleted()));
    expect(decodeEvent({ ...e, eventType: "task.exploded" })).toMatchObject({
      ok: false,
      error: { code: "unknown_type", eventId: e.eventId },
    });
    expect(decodeEvent({ ...e, eventVersion: 2 })).toMatchObject({ ok: false, error: { code: "wrong_version" } });
    expect(decodeEvent({ ...e, payload: { runId: 5 } })).toMatchObject({ ok: false, error: { code: "bad_payload" } });
    expect(decodeEvent({ ...e, eventId: "nope" })).toMatchObject({
      ok: false,
      error: { code: "malformed_envelope", eventId: "nope" },
    });
    expect(decodeEvent(null)).toMatchObject({ ok: false, error: { code: "malformed_envelope", eventId: null } });
    expect(decodeEvent("garbage")).toMatchObject({ ok: false, error: { code: "malformed_envelope" } });
  });

  it("refuses to build an envelope with a bad payload", () => {
    expect(() =>
      buildEvent({
        ...base,
        eventId: stableEventId("c", "task.failed", null),
        eventType: "task.failed",
        payload: {} as never,
      }),
    ).toThrow();
  });

  it("has an owner and a version for every type, and metric names only for catalogued types", () => {
    for (const t of EVENT_TYPES) {
      expect(EVENT_CATALOGUE[t].version).toBeGreaterThan(0);
      expect(["project-root", "resource-shard"]).toContain(EVENT_CATALOGUE[t].owner);
    }
    expect(EVENT_CATALOGUE["canonical.advanced"].owner).toBe("project-root");
    expect(EVENT_CATALOGUE["artifact.promoted"].owner).toBe("project-root");
    expect(EVENT_CATALOGUE["project.created"].owner).toBe("project-root");
    expect(EVENT_CATALOGUE["task.completed"].owner).toBe("resource-shard");
    expect(METRIC_FOR_EVENT["agent.woken"]?.({ stale: true })).toBe("agent_false_wakeup");
    expect(METRIC_FOR_EVENT["agent.woken"]?.({ stale: false })).toBe("agent_wakeup");
  });
});

describe("command envelope", () => {
  it("requires every key field", () => {
    const cmd = {
      commandId: "cmd_cand_1_verify",
      commandType: "verification.start",
      projectId: "proj_1",
      changeId: "chg_1",
      taskId: null,
      attempt: 0,
      createdAt: "2026-01-01T00:00:00.000Z",
      deadline: null,
      payload: { candidateId: "cand_1" },
    };
    expect(commandEnvelopeSchema.parse(cmd)).toEqual(cmd);
    const { deadline: _omit, ...missing } = cmd;
    expect(commandEnvelopeSchema.safeParse(missing).success).toBe(false);
    expect(commandEnvelopeSchema.safeParse({ ...cmd, commandId: "x" }).success).toBe(false);
  });
});
