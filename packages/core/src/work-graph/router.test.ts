import { describe, expect, it } from "vitest";
import type { EventType } from "../events/catalogue.ts";
import { INFORMATIONAL_EVENT_TYPES } from "../events/catalogue.ts";
import { type AnyEventEnvelope, buildEvent } from "../events/envelope.ts";
import { stableEventId } from "../events/event-id.ts";
import { type ActiveAgent, type RouterSnapshot, routeEvent } from "./router.ts";

/** A built (so validated) Event; as the consumer hands it over, one member of the union. */
function ev<T extends EventType>(eventType: T, payload: unknown, taskId: string | null = null): AnyEventEnvelope {
  return buildEvent({
    eventId: stableEventId("chg_1", eventType, taskId, JSON.stringify(payload)),
    eventType,
    tenantId: "ten_1",
    projectId: "proj_1",
    changeId: "chg_1",
    taskId,
    actor: { kind: "agent", id: "agt_x" },
    resource: "change:chg_1",
    canonicalGeneration: 0,
    correlationId: "chg_1",
    timestamp: new Date("2026-01-01T00:00:00Z"),
    payload: payload as never,
  }) as AnyEventEnvelope;
}

const agent = (agentId: string, paths: string[], prefixes: string[] = []): ActiveAgent => ({
  agentId,
  taskId: `task_${agentId}`,
  changeId: "chg_1",
  held: { paths, prefixes },
});

const snap = (o: Partial<RouterSnapshot> = {}): RouterSnapshot => ({
  maxActiveAgents: 8,
  tasks: [],
  activeAgents: [],
  candidates: [],
  ...o,
});
const types = (d: ReturnType<typeof routeEvent>) =>
  d.kind === "route" ? d.commands.map((c) => c.commandType) : d.reason;

describe("causal router, branch by branch", () => {
  it("ignores task.ready: the dispatcher already sent the wake", () => {
    expect(routeEvent(ev("task.ready", { key: "a" }, "t1"), snap())).toEqual({ kind: "ignore", reason: "task_ready" });
  });

  it.each(INFORMATIONAL_EVENT_TYPES)("takes no action on informational %s", (type) => {
    expect(INFORMATIONAL_EVENT_TYPES).not.toContain("task.completed");
    const d = routeEvent({ ...ev("task.ready", { key: "a" }), eventType: type } as never, snap());
    expect(d).toEqual({ kind: "ignore", reason: "informational" });
  });

  it.each([
    [
      "task.completed readies dependents",
      "task.completed",
      [
        { id: "a", key: "a", state: "completed", dependsOn: [] },
        { id: "b", key: "b", state: "pending", dependsOn: ["a"] },
      ],
      ["change.dispatch"],
    ],
    [
      "task.completed with nothing to ready",
      "task.completed",
      [
        { id: "a", key: "a", state: "completed", dependsOn: [] },
        { id: "b", key: "b", state: "pending", dependsOn: ["a", "c"] },
        { id: "c", key: "c", state: "running", dependsOn: [] },
      ],
      [],
    ],
    [
      "task.failed frees a slot for a waiting ready Task",
      "task.failed",
      [
        { id: "a", key: "a", state: "failed", dependsOn: [] },
        { id: "b", key: "b", state: "ready", dependsOn: [] },
      ],
      ["change.dispatch"],
    ],
    [
      "task.failed with nobody waiting",
      "task.failed",
      [
        { id: "a", key: "a", state: "failed", dependsOn: [] },
        { id: "b", key: "b", state: "running", dependsOn: [] },
      ],
      [],
    ],
  ] as const)("%s", (_n, type, tasks, expected) => {
    const payload = type === "task.completed" ? { runId: "run_1", changeSetId: null } : { reason: "x" };
    expect(types(routeEvent(ev(type, payload, "a"), snap({ tasks: tasks as never })))).toEqual(expected);
  });

  it("re-dispatches when a Task completes at the 8-agent limit and a ready Task waits", () => {
    const running = Array.from({ length: 7 }, (_, i) => ({
      id: `r${i}`,
      key: `r${i}`,
      state: "running" as const,
      dependsOn: [],
    }));
    const tasks = [
      ...running,
      { id: "a", key: "a", state: "completed" as const, dependsOn: [] },
      { id: "w", key: "w", state: "ready" as const, dependsOn: [] },
    ];
    expect(
      types(routeEvent(ev("task.completed", { runId: "run_1", changeSetId: null }, "a"), snap({ tasks }))),
    ).toEqual(["change.dispatch"]);
  });

  it("verification.started with work_graph_completed -> candidate.create; other reasons -> nothing", () => {
    expect(
      types(routeEvent(ev("verification.started", { reason: "work_graph_completed", candidateId: null }), snap())),
    ).toEqual(["candidate.create"]);
    expect(routeEvent(ev("verification.started", { reason: "manual", candidateId: null }), snap())).toEqual({
      kind: "ignore",
      reason: "not_applicable",
    });
  });

  it("canonical.advanced wakes active agents, marks older Candidates stale and builds the index", () => {
    const d = routeEvent(
      ev("canonical.advanced", { candidateId: "cand_9", fromGeneration: 1, toGeneration: 2, treeHash: "t" }),
      snap({
        activeAgents: [agent("agt_a", ["src/a.ts"]), agent("agt_b", [])],
        candidates: [
          { id: "cand_old", baseGeneration: 1, status: "verified" },
          { id: "cand_done", baseGeneration: 1, status: "rejected" },
          { id: "cand_new", baseGeneration: 2, status: "verifying" },
        ],
      }),
    );
    expect(d).toMatchObject({ kind: "route", staleCandidates: ["cand_old"] });
    expect(types(d)).toEqual(["agent.wake", "agent.wake", "index.build"]);
    if (d.kind === "route") expect(d.commands[2]?.commandId).toBe("cmd_index_proj_1_S2");
  });

  it("candidate.stale recomposes the Change on the new generation, with one command ID per stale Candidate", () => {
    const stale = ev("candidate.stale", { candidateId: "cand_old", canonicalGeneration: 7 });
    const d = routeEvent(stale, snap());
    expect(d).toMatchObject({
      kind: "route",
      commands: [
        {
          commandType: "candidate.create",
          commandId: "cmd_recompose_chg_1_S7_cand_old",
          changeId: "chg_1",
          payload: { recomposeFrom: "cand_old", generation: 7, causeEventId: stale.eventId },
        },
      ],
      staleCandidates: [],
    });
    // The Event delivered twice asks for the same command, which the queue takes once; another
    // Candidate of the Change made stale on the same generation (its stack's Candidate below it
    // failed) is a recomposition of its own.
    const twice = routeEvent(stale, snap());
    expect(twice.kind === "route" && twice.commands[0]?.commandId).toBe("cmd_recompose_chg_1_S7_cand_old");
    const again = routeEvent(ev("candidate.stale", { candidateId: "cand_other", canonicalGeneration: 7 }), snap());
    expect(again.kind === "route" && again.commands[0]?.commandId).toBe("cmd_recompose_chg_1_S7_cand_other");
  });

  it("a speculative stack: what sits on a Candidate that left goes stale; what sits on the one that landed lands", () => {
    const candidates = [
      { id: "cand_head", changeId: "chg_h", baseGeneration: 2, status: "verified", stackedOn: null },
      {
        id: "cand_mid",
        changeId: "chg_m",
        baseGeneration: 3,
        status: "verified",
        stackedOn: "cand_head",
        stackedOnChange: "chg_h",
      },
      {
        id: "cand_top",
        changeId: "chg_t",
        baseGeneration: 4,
        status: "verifying",
        stackedOn: "cand_mid",
        stackedOnChange: "chg_m",
      },
      {
        id: "cand_side",
        changeId: "chg_s",
        baseGeneration: 3,
        status: "verifying",
        stackedOn: "cand_other",
        stackedOnChange: "chg_o",
      },
      { id: "cand_fresh", changeId: "chg_f", baseGeneration: 3, status: "created", stackedOn: null },
    ];
    const landed = routeEvent(
      ev("canonical.advanced", { candidateId: "cand_head", fromGeneration: 2, toGeneration: 3, treeHash: "t" }),
      snap({ candidates }),
    );
    // The head's own row is promoted by now; here it still reads verified at S2, so it is listed too.
    expect(landed).toMatchObject({ kind: "route", staleCandidates: ["cand_head", "cand_side"] });
    expect(landed.kind === "route" && landed.commands.filter((c) => c.commandType === "candidate.land")).toMatchObject([
      { commandId: "cmd_land_cand_mid_stacked", changeId: "chg_m", payload: { candidateId: "cand_mid" } },
    ]);
    const failed = routeEvent(
      ev("candidate.rejected", { candidateId: "cand_mid", reason: "r", gaps: [] }),
      snap({ candidates }),
    );
    expect(failed).toMatchObject({ kind: "route", commands: [], staleCandidates: ["cand_top"] });
    const staled = routeEvent(
      ev("candidate.stale", { candidateId: "cand_mid", canonicalGeneration: 3 }),
      snap({ candidates }),
    );
    expect(staled).toMatchObject({ kind: "route", staleCandidates: ["cand_top"] });
    const cancelled = routeEvent(
      { ...ev("change.cancelled", { reason: "r", candidateIds: ["cand_head"], actorId: "usr_1" }), changeId: "chg_h" },
      snap({ candidates }),
    );
    expect(cancelled).toMatchObject({ kind: "route", staleCandidates: ["cand_mid"] });
    const off = routeEvent(
      { ...ev("change.landing_changed", { landWhenReady: false, actorId: "usr_1" }), changeId: "chg_m" },
      snap({ candidates }),
    );
    expect(off).toMatchObject({ kind: "route", staleCandidates: ["cand_top"] });
  });

  it("artifact.promoted builds the index with the same command ID as canonical.advanced", () => {
    const d = routeEvent(
      ev("artifact.promoted", { candidateId: "cand_9", generation: 2, treeHash: "t", commit: "c" }),
      snap(),
    );
    expect(d.kind === "route" && d.commands.map((c) => c.commandId)).toEqual(["cmd_index_proj_1_S2"]);
  });

  it.each([
    ["intent.declared", { agentId: "agt_me", paths: ["src/cart.ts"], prefixes: [] }],
    ["challenge.raised", { agentId: "agt_me", paths: ["src/cart.ts"], reason: "r" }],
    ["changeset.published", { changeSetId: "cs_1", agentId: "agt_me", paths: ["src/cart.ts"], patchRef: null }],
    // Without a Task (so no challenge can name the claimant), a claim routes like the others.
    ["claim.acquired", { agentId: "agt_me", paths: ["src/cart.ts"] }],
  ] as const)(
    "%s: exact overlap wakes, prefix asks the classifier, none does nothing, self is skipped",
    (type, payload) => {
      const d = routeEvent(
        ev(type, payload),
        snap({
          activeAgents: [
            agent("agt_exact", ["src/cart.ts"]),
            agent("agt_prefix", [], ["src/"]),
            agent("agt_none", ["docs/x.md"]),
            agent("agt_me", ["src/cart.ts"]),
          ],
        }),
      );
      expect(d.kind).toBe("route");
      if (d.kind !== "route") return;
      expect(d.commands.map((c) => [c.commandType, c.payload.agentId])).toEqual([["agent.wake", "agt_exact"]]);
      expect(d.ask.map((a) => a.agent.agentId)).toEqual(["agt_prefix"]);
      expect(d.ask[0]?.wake.commandId).toBe(`cmd_wake_agt_prefix_${d.commands[0]?.payload.causeEventId}`);
    },
  );

  it("claim.released wakes nobody: the hold was heard when it began, the content comes as changeset.published", () => {
    const d = routeEvent(
      ev("claim.released", { agentId: "agt_me", paths: ["src/cart.ts"] }, "task_me"),
      snap({ activeAgents: [agent("agt_exact", ["src/cart.ts"]), agent("agt_prefix", [], ["src/"])] }),
    );
    expect(d).toEqual({ kind: "route", commands: [], ask: [], staleCandidates: [], challenges: [] });
  });
});

describe("intents, claims and challenges", () => {
  const holders = [
    { ...agent("agt_a", ["src/shared.ts", "src/a.ts"]), taskId: "task_a", attempt: 1 },
    { ...agent("agt_p", [], ["src/"]), taskId: "task_p", attempt: 2 },
    { ...agent("agt_b", ["src/shared.ts"]), taskId: "task_b", attempt: 1 },
  ];
  const wakes = (d: ReturnType<typeof routeEvent>) =>
    d.kind === "route" ? d.commands.map((c) => [c.payload.agentId, c.commandId, c.payload.reason]) : [];

  it("an intent wakes the holder of the same path once per (holder, cause attempt), and asks about a prefix", () => {
    const intent = ev(
      "intent.declared",
      { agentId: "agt_b", paths: ["src/shared.ts"], prefixes: [], attempt: 3 },
      "task_b",
    );
    const d = routeEvent(intent, snap({ activeAgents: holders }));
    expect(wakes(d)).toEqual([["agt_a", "cmd_wake_agt_a_a1_hold_task_b_a3", "exact_overlap"]]);
    expect(d.kind === "route" && d.commands[0]?.payload).toMatchObject({
      causeTaskId: "task_b",
      causeType: "intent.declared",
      overlapping: ["src/shared.ts"],
    });
    expect(d.kind === "route" && d.ask.map((a) => a.wake.commandId)).toEqual(["cmd_wake_agt_p_a2_hold_task_b_a3"]);
  });

  it("a claim naming a held path raises a challenge against that holder instead of waking it", () => {
    const claim = ev("claim.acquired", { agentId: "agt_b", paths: ["src/shared.ts"], attempt: 3 }, "task_b");
    const d = routeEvent(claim, snap({ activeAgents: holders }));
    expect(d.kind === "route" && d.challenges).toEqual([
      {
        heldBy: { taskId: "task_a", agentId: "agt_a" },
        paths: ["src/shared.ts"],
        reason: "the claim of task_b names src/shared.ts, which task_a (agt_a) holds",
      },
    ]);
    expect(wakes(d)).toEqual([]);
    // A prefix-only holder is a question for the classifier, not a challenge.
    expect(d.kind === "route" && d.ask.map((a) => a.agent.agentId)).toEqual(["agt_p"]);
  });

  it("a challenge wakes only the holder it names, with the same wake as the intent's (one cause, one wake)", () => {
    const challenge = ev(
      "challenge.raised",
      {
        agentId: "agt_b",
        paths: ["src/shared.ts"],
        reason: "r",
        attempt: 3,
        heldBy: { taskId: "task_a", agentId: "agt_a" },
      },
      "task_b",
    );
    const other = { ...agent("agt_c", ["src/shared.ts"]), taskId: "task_c" };
    const d = routeEvent(challenge, snap({ activeAgents: [...holders, other] }));
    expect(wakes(d)).toEqual([["agt_a", "cmd_wake_agt_a_a1_hold_task_b_a3", "exact_overlap"]]);
    expect(d.kind === "route" && d.ask).toEqual([]);
  });

  it("a published ChangeSet wakes per Event (its content is new), and never the Agent that published it", () => {
    const published = ev(
      "changeset.published",
      { changeSetId: "cs_1", agentId: "agt_b", paths: ["src/shared.ts"], patchRef: null },
      "task_b",
    );
    const d = routeEvent(published, snap({ activeAgents: holders }));
    expect(wakes(d)).toEqual([["agt_a", `cmd_wake_agt_a_${published.eventId}`, "exact_overlap"]]);
  });

  it("no overlap wakes nobody and raises nothing (non-overlapping Changes run undisturbed)", () => {
    const claim = ev("claim.acquired", { agentId: "agt_z", paths: ["docs/z.md"], attempt: 1 }, "task_z");
    expect(routeEvent(claim, snap({ activeAgents: holders.slice(0, 1) }))).toEqual({
      kind: "route",
      commands: [],
      ask: [],
      staleCandidates: [],
      challenges: [],
    });
  });
});
