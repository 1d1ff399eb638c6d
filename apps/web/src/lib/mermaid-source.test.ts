import { TASK_STATES } from "@rhumbatron/core";
import { describe, expect, it } from "vitest";
import { mermaidText } from "./mermaid-text.ts";
import { type ChartTask, TASK_STATE_COLORS, taskStateLabel, workGraphFlowchart } from "./work-graph-chart.ts";

describe("mermaidText", () => {
  it("writes quotes, markup and entity starts as mermaid entity codes, # first", () => {
    expect(mermaidText(`Say "hi" <b>#1</b> & \`x\``)).toBe(
      "Say #quot;hi#quot; #lt;b#gt;#35;1#lt;/b#gt; #amp; #96;x#96;",
    );
    // An input that already looks like an entity stays literal text.
    expect(mermaidText("#quot;")).toBe("#35;quot;");
  });

  it("flattens line breaks and cuts long text", () => {
    expect(mermaidText("a\nb\r\n\tc")).toBe("a b c");
    expect(mermaidText("x".repeat(100), 10)).toBe(`${"x".repeat(9)}…`);
  });
});

describe("workGraphFlowchart", () => {
  const tasks: ChartTask[] = [
    { key: "model", title: "Wishlist model", state: "completed", dependencies: [], blockedLimit: null },
    { key: "api-v2", title: 'API "v2"', state: "running", dependencies: ["model"], blockedLimit: null },
    { key: "page", title: "Page", state: "blocked", dependencies: ["api-v2", "model"], blockedLimit: "sandbox_meter" },
    { key: "docs", title: "Docs", state: "failed", dependencies: ["gone"], blockedLimit: null },
  ];
  const source = workGraphFlowchart(tasks);
  const lines = source.split("\n");

  it("defines one class per Task state with that state's colours", () => {
    for (const state of TASK_STATES) {
      const c = TASK_STATE_COLORS[state];
      expect(lines).toContainEqual(
        expect.stringMatching(new RegExp(`^  classDef ${state} fill:${c.fill},stroke:${c.stroke},color:${c.text}`)),
      );
    }
    expect(new Set(Object.values(TASK_STATE_COLORS).map((c) => c.fill)).size).toBe(TASK_STATES.length);
  });

  it("gives each Task a node in its state's class, with escaped text and a blocked Task's limit", () => {
    expect(lines).toContain('  t0["model · Wishlist model<br/>completed"]:::completed');
    expect(lines).toContain('  t1["api-v2 · API #quot;v2#quot;<br/>running"]:::running');
    expect(lines).toContain('  t2["page · Page<br/>blocked: sandbox_meter"]:::blocked');
    expect(lines).toContain('  t3["docs · Docs<br/>failed"]:::failed');
  });

  it("draws an edge from each dependency to the Task that waits for it, skipping unknown keys", () => {
    expect(lines.filter((l) => l.includes("-->"))).toEqual(["  t0 --> t1", "  t1 --> t2", "  t0 --> t2"]);
  });

  it("labels states for people", () => {
    expect(taskStateLabel({ state: "blocked", blockedLimit: "command_cap" })).toBe("blocked: command_cap");
    expect(taskStateLabel({ state: "blocked", blockedLimit: null })).toBe("blocked");
    expect(taskStateLabel({ state: "ready", blockedLimit: null })).toBe("ready");
  });
});
