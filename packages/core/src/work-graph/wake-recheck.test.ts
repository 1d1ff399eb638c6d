import { describe, expect, it } from "vitest";
import { recheckWake, type WakeCause, type WokenTask } from "./wake-recheck.ts";

const running: WokenTask = {
  state: "running",
  agentId: "agt_a",
  intents: { paths: ["src/shared.ts"], prefixes: [] },
  editedPaths: [],
};
const cause = (o: Partial<WakeCause> = {}): WakeCause => ({
  taskKey: "b",
  state: "running",
  changeId: "chg_y",
  changeStatus: "open",
  held: { paths: ["src/shared.ts"], prefixes: [] },
  changeSetPaths: null,
  ...o,
});
const hold = { reason: "exact_overlap", causeType: "intent.declared", causeTaskId: "task_b" };

describe("recheckWake: the woken Agent checks the wake against the state now", () => {
  it("goes on while the other Task still holds a path this Task touches", () => {
    expect(recheckWake("agt_a", hold, running, cause(), false)).toEqual({
      stale: false,
      action: "continue",
      paths: ["src/shared.ts"],
      note: "continued: task b holds src/shared.ts, which this Task also touches; whichever Change lands second is recomposed on the first",
    });
  });

  it("counts the files the run edited as well as its intents", () => {
    const edited = { ...running, intents: { paths: [], prefixes: [] }, editedPaths: ["src/shared.ts"] };
    expect(recheckWake("agt_a", hold, edited, cause(), true)).toMatchObject({
      action: "continue",
      note: expect.stringContaining("composed together into the Change's Candidate"),
    });
    expect(recheckWake("agt_a", hold, { ...edited, editedPaths: [] }, cause(), true)).toMatchObject({ stale: true });
  });

  it("stops when the other Task let go and published nothing there, or its Change was cancelled", () => {
    expect(recheckWake("agt_a", hold, running, cause({ state: "blocked" }), false)).toEqual({
      stale: true,
      action: "stop",
      paths: [],
      note: "stopped: task b is blocked and no longer holds its paths; it published nothing",
    });
    expect(
      recheckWake("agt_a", hold, running, cause({ state: "completed", changeSetPaths: ["docs/b.md"] }), false).note,
    ).toBe(
      "stopped: task b is completed and no longer holds its paths; its ChangeSet touches nothing this Task touches",
    );
    expect(recheckWake("agt_a", hold, running, cause({ changeStatus: "cancelled" }), false).note).toBe(
      "stopped: task b's Change was cancelled: nothing of it will land",
    );
  });

  it("a ChangeSet wake is about the ChangeSet: it goes on when the ChangeSet touches this Task's files", () => {
    const cs = { reason: "exact_overlap", causeType: "changeset.published", causeTaskId: "task_b" };
    const done = cause({ state: "completed", changeSetPaths: ["src/shared.ts"] });
    expect(recheckWake("agt_a", cs, running, done, false)).toMatchObject({
      action: "continue",
      note: expect.stringContaining("task b changed src/shared.ts"),
    });
    // Its hold alone does not count for a ChangeSet wake.
    expect(recheckWake("agt_a", cs, running, cause({ changeSetPaths: ["docs/x.md"] }), false).stale).toBe(true);
  });

  it("stops when this Task's run already ended or another Agent holds it", () => {
    expect(recheckWake("agt_a", hold, { ...running, state: "completed" }, cause(), false).note).toBe(
      "stopped: the Task is completed: its run ended before the wake reached it",
    );
    expect(recheckWake("agt_x", hold, running, cause(), false).note).toBe("stopped: another Agent holds the Task now");
  });

  it("a prefix intent counts; a wake without a cause Task re-checks the Event's paths", () => {
    const folder = { ...running, intents: { paths: [], prefixes: ["src/"] } };
    expect(recheckWake("agt_a", hold, folder, cause(), false).paths).toEqual(["src/"]);
    const noCause = { reason: "prefix_overlap", eventPaths: ["lib/x.ts"] };
    expect(recheckWake("agt_a", noCause, folder, null, false).stale).toBe(true);
    expect(recheckWake("agt_a", { ...noCause, eventPaths: ["src/x.ts"] }, folder, null, false).stale).toBe(false);
    expect(recheckWake("agt_a", { reason: "canonical_advanced" }, running, null, false).action).toBe("continue");
  });
});
