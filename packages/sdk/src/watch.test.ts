import { describe, expect, it } from "vitest";
import { outcomeOf, type TaskView, type WatchSnapshot } from "./watch.ts";

const task = (key: string, state: string, dependencies: string[] = []): TaskView => ({
  key,
  title: key,
  state,
  blockedLimit: state === "blocked" ? "dead_letter" : null,
  dependencies,
});
const snap = (tasks: TaskView[], candidate: string | null = null, change = "open"): WatchSnapshot => ({
  change: { id: "chg", title: "c", status: change },
  tasks,
  candidate: candidate ? { id: "cand", status: candidate, approvalRequired: false } : null,
});

describe("when a watch ends", () => {
  it("goes on while Tasks can still run or the Candidate is being verified", () => {
    expect(outcomeOf(snap([task("a", "running"), task("b", "pending", ["a"])]))).toBeNull();
    expect(outcomeOf(snap([task("a", "completed")], "verifying", "verifying"))).toBeNull();
    // b failed, but c's dependency completed: c is about to become ready.
    expect(
      outcomeOf(snap([task("a", "completed"), task("b", "failed", ["a"]), task("c", "pending", ["a"])])),
    ).toBeNull();
  });

  it("ends on the newest Candidate's final state and on a cancelled Change", () => {
    expect(outcomeOf(snap([task("a", "completed")], "verified"))).toBe("verified");
    expect(outcomeOf(snap([task("a", "completed")], "promoted"))).toBe("promoted");
    expect(outcomeOf(snap([task("a", "completed")], "rejected"))).toBe("rejected");
    expect(outcomeOf(snap([task("a", "completed")], "stale"))).toBe("stale");
    expect(outcomeOf(snap([task("a", "blocked")], null, "cancelled"))).toBe("cancelled");
  });

  it("ends as failed when a Task failed or is blocked and nothing else can run", () => {
    expect(outcomeOf(snap([task("a", "failed"), task("b", "pending", ["a"])]))).toBe("failed");
    expect(outcomeOf(snap([task("a", "completed"), task("b", "blocked", ["a"])]))).toBe("failed");
  });
});
