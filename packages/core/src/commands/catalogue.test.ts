import { describe, expect, it } from "vitest";
import { DomainError } from "../errors.ts";
import { COMMAND_TYPES, commandEnvelopeSchema } from "../events/command.ts";
import { COMMAND_CATALOGUE, commandIds, commandPayloadProblem, newCommand, QUEUE_FOR_COMMAND } from "./catalogue.ts";

describe("the command catalogue", () => {
  it("declares every command type once, with its queue", () => {
    expect(Object.keys(COMMAND_CATALOGUE).sort()).toEqual([...COMMAND_TYPES].sort());
    for (const t of COMMAND_TYPES) expect(QUEUE_FOR_COMMAND[t]).toBe(COMMAND_CATALOGUE[t].queue);
  });

  it("makes IDs the envelope accepts, the same for the same inputs", () => {
    const ids = [
      commandIds.wake("task_1"),
      commandIds.wake("task_1", 3),
      commandIds.wakeOnEvent("agt_1", "evt_1"),
      commandIds.dispatchCreated("chg_1"),
      commandIds.dispatchAfter("evt_1"),
      commandIds.dispatchRetry("task_1", 2),
      commandIds.compose("evt_1"),
      commandIds.recompose("chg_1", 4, "cand_1"),
      commandIds.recomposeHeld("chg_1", 4, 1_764_000_000_000),
      commandIds.verify("cand_1"),
      commandIds.land("cand_1", "verified"),
      commandIds.release("rel_proj_1_2"),
      commandIds.indexBuild("proj_1", 2),
      commandIds.indexPurge("proj_1"),
      commandIds.provision("proj_1"),
      commandIds.cleanup("proj_1"),
      commandIds.forksSweep("proj_1", "2026-12-02"),
    ];
    for (const id of ids) expect(commandEnvelopeSchema.shape.commandId.safeParse(id).success, id).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(commandIds.recompose("chg_1", 4, "cand_1")).toBe("cmd_recompose_chg_1_S4_cand_1");
  });

  it("refuses a payload that lacks what the handler needs, and keeps fields it does not name", () => {
    expect(commandPayloadProblem("index.build", {})).toMatch(/^generation: /);
    expect(commandPayloadProblem("candidate.land", { candidateId: "" })).toMatch(/^candidateId: /);
    expect(() =>
      newCommand("verification.start", { commandId: "cmd_x_verify", projectId: "p", payload: {} as never }),
    ).toThrow(DomainError);
    const c = newCommand("change.dispatch", {
      commandId: commandIds.dispatchAfter("evt_1"),
      projectId: "proj_1",
      changeId: "chg_1",
      payload: { causeEventId: "evt_1", note: "kept" },
    });
    expect(c).toEqual({
      commandType: "change.dispatch",
      commandId: "cmd_dispatch_evt_1",
      projectId: "proj_1",
      changeId: "chg_1",
      taskId: null,
      payload: { causeEventId: "evt_1", note: "kept" },
    });
  });
});
