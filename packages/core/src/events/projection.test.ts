import { describe, expect, it } from "vitest";
import type { EventPayload, EventType } from "./catalogue.ts";
import { buildEvent } from "./envelope.ts";
import { stableEventId } from "./event-id.ts";
import { projectViewDelta } from "./projection.ts";

function event<T extends EventType>(eventType: T, payload: EventPayload<T>, changeId: string | null = "chg_1") {
  return buildEvent({
    eventId: stableEventId("chg_1", eventType),
    eventType,
    tenantId: "ten_1",
    projectId: "proj_1",
    changeId,
    actor: { kind: "system", id: "t" },
    resource: changeId ? `change:${changeId}` : "project:proj_1",
    canonicalGeneration: 0,
    correlationId: "c",
    timestamp: new Date("2026-11-29T00:00:00Z"),
    payload,
  });
}

describe("what an Event changes in the project view", () => {
  it("moves a Change through open, verifying and promoted", () => {
    expect(
      projectViewDelta(
        event("change.created", { title: "t", riskTier: "low", clientRequestId: "r", taskIds: ["task_1"] }),
      ),
    ).toEqual({
      entities: [
        { kind: "change", id: "chg_1", state: "open" },
        { kind: "task", id: "task_1", state: "pending" },
      ],
    });
    expect(
      projectViewDelta(event("verification.started", { reason: "work_graph_completed", candidateId: null })),
    ).toEqual({
      entities: [{ kind: "change", id: "chg_1", state: "verifying" }],
    });
    expect(
      projectViewDelta(
        event("canonical.advanced", { candidateId: "cand_1", fromGeneration: 0, toGeneration: 1, treeHash: "t" }),
      ),
    ).toEqual({
      entities: [
        { kind: "candidate", id: "cand_1", state: "promoted" },
        { kind: "change", id: "chg_1", state: "promoted" },
      ],
      canonicalGeneration: 1,
    });
  });

  it("follows a Candidate and ignores Events that change no state", () => {
    expect(projectViewDelta(event("candidate.rejected", { candidateId: "cand_1", reason: "r", gaps: [] }))).toEqual({
      entities: [{ kind: "candidate", id: "cand_1", state: "rejected" }],
    });
    expect(projectViewDelta(event("approval.requested", { candidateId: "cand_1", treeHash: "t" }))).toEqual({
      entities: [],
    });
  });
});
