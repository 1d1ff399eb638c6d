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
    // Stale is not an end: the Change is recomposed on the new generation and the watch goes on.
    expect(outcomeOf(snap([task("a", "completed")], "stale"))).toBeNull();
    expect(outcomeOf(snap([task("a", "blocked")], null, "cancelled"))).toBe("cancelled");
  });

  it("ends as failed when a Task failed or is blocked and nothing else can run", () => {
    expect(outcomeOf(snap([task("a", "failed"), task("b", "pending", ["a"])]))).toBe("failed");
    expect(outcomeOf(snap([task("a", "completed"), task("b", "blocked", ["a"])]))).toBe("failed");
  });
});

describe("a recomposed Change", () => {
  it("follows the new Candidate and says why it was made", async () => {
    const { watchChange } = await import("./watch.ts");
    const steps: { status: string; candidates: { id: string; status: string; recomposeReason: string | null }[] }[] = [
      { status: "verifying", candidates: [{ id: "cand_1", status: "verifying", recomposeReason: null }] },
      { status: "verifying", candidates: [{ id: "cand_1", status: "stale", recomposeReason: null }] },
      {
        status: "verifying",
        candidates: [
          { id: "cand_2", status: "created", recomposeReason: "recomposed on generation 7 after chg_x was promoted" },
          { id: "cand_1", status: "stale", recomposeReason: null },
        ],
      },
      { status: "promoted", candidates: [{ id: "cand_2", status: "promoted", recomposeReason: "r" }] },
    ];
    let i = 0;
    const seen: string[] = [];
    const r = await watchChange(
      {
        change: async () => ({ id: "chg", title: "c", status: steps[i]?.status ?? "", tasks: [] }),
        candidates: async () => (steps[i++]?.candidates ?? []).map((c) => ({ ...c, approvalRequired: false })),
      },
      "chg",
      (u) => {
        for (const t of u.transitions) if (t.kind === "candidate") seen.push(`${t.id} ${t.to} ${t.note ?? ""}`.trim());
      },
      { intervalMs: 1 },
    );
    expect(r.outcome).toBe("promoted");
    expect(seen).toEqual([
      "cand_1 verifying",
      "cand_1 stale",
      "cand_2 created recomposed on generation 7 after chg_x was promoted",
      "cand_2 promoted",
    ]);
  });
});
