import { describe, expect, it } from "vitest";
import { type GraphTask, isGraphComplete, newlyReadyTasks, planDispatch, topologicalOrder } from "./graph.ts";

const task = (key: string, state: GraphTask["state"], dependsOn: string[] = [], dispatched = false): GraphTask => ({
  key,
  state,
  dependsOn,
  dispatched,
});

describe("work graph", () => {
  it("readies pending Tasks whose dependencies completed", () => {
    const g = [
      task("a", "completed"),
      task("b", "pending", ["a"]),
      task("c", "pending", ["a", "b"]),
      task("d", "pending"),
    ];
    expect(newlyReadyTasks(g)).toEqual(["b", "d"]);
  });

  it("orders dependencies first, then declaration order", () => {
    expect(
      topologicalOrder([
        task("c", "pending", ["b"]),
        task("a", "pending"),
        task("b", "pending", ["a"]),
        task("d", "pending"),
      ]),
    ).toEqual(["a", "b", "c", "d"]);
  });

  it("is complete only when every Task completed", () => {
    expect(isGraphComplete([task("a", "completed"), task("b", "completed")])).toBe(true);
    expect(isGraphComplete([task("a", "completed"), task("b", "failed")])).toBe(false);
    expect(isGraphComplete([])).toBe(false);
  });

  it("wakes at most 8 agents and leaves the rest waiting", () => {
    const g = Array.from({ length: 10 }, (_, i) => task(`t${i}`, "pending"));
    expect(planDispatch(g, 8)).toEqual({
      markReady: g.map((t) => t.key),
      wake: g.slice(0, 8).map((t) => t.key),
      waiting: ["t8", "t9"],
    });
  });

  it("fills a freed slot on the next dispatch", () => {
    const g = [
      ...Array.from({ length: 7 }, (_, i) => task(`r${i}`, "running")),
      task("done", "completed"),
      task("w1", "ready"),
      task("w2", "ready"),
    ];
    expect(planDispatch(g, 8)).toEqual({ markReady: [], wake: ["w1"], waiting: ["w2"] });
    expect(
      planDispatch([...g.slice(0, 7), task("done", "completed"), task("w1", "ready", [], true), task("w2", "ready")], 8)
        .wake,
    ).toEqual([]);
  });
});
