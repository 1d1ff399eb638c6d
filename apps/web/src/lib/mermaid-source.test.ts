import { TASK_STATES } from "@rhumbatron/core";
import { describe, expect, it } from "vitest";
import { generationFlowchart, generationRows, MAX_DRAWN_GENERATIONS, shortCandidateId } from "./generation-graph.ts";
import { mermaidText } from "./mermaid-text.ts";
import { type ChartTask, TASK_STATE_COLORS, taskStateLabel, workGraphFlowchart } from "./work-graph-chart.ts";

const cand = (n: number) => `cand_${n.toString(16).padStart(8, "0")}${"0".repeat(24)}`;

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

describe("generationFlowchart", () => {
  it("draws one level node per generation, newest on top, with its Change's title, the current one highlighted", () => {
    const source = generationFlowchart(
      [
        { generation: 1, candidateId: cand(0x3f2a9c1b), changeTitle: "Add a wishlist page" },
        { generation: 0, candidateId: null },
        { generation: 2, candidateId: cand(2), changeTitle: null },
      ],
      2,
    );
    expect(source.split("\n")).toEqual([
      "flowchart BT",
      "  classDef current fill:#d1fae5,stroke:#047857,color:#064e3b,font-weight:bold",
      '  g0["S0<br/>project template"]',
      '  g1["S1<br/>Add a wishlist page"]',
      '  g2["S2<br/>cand_00000002…"]:::current',
      "  g0 --> g1",
      "  g1 --> g2",
    ]);
    // Not a gitGraph: its commit labels are rotated and cut.
    expect(source).not.toMatch(/gitGraph|rotate/);
  });

  it("keeps the newest generations and sums up the older ones in a first node", () => {
    const many = Array.from({ length: MAX_DRAWN_GENERATIONS + 5 }, (_, g) => ({
      generation: g,
      candidateId: g === 0 ? null : cand(g),
    }));
    const lines = generationFlowchart(many, MAX_DRAWN_GENERATIONS + 4).split("\n");
    expect(lines[2]).toBe('  earlier["5 earlier generations"]');
    expect(lines[3]).toMatch(/^ {2}g5\["S5<br\/>/);
    expect(lines).toContain("  earlier --> g5");
    expect(lines.filter((l) => /^ {2}g\d+\[/.test(l))).toHaveLength(MAX_DRAWN_GENERATIONS);
  });

  it("escapes a title and cuts a long one, and shortens only well-formed Candidate IDs", () => {
    const source = generationFlowchart(
      [{ generation: 3, candidateId: "c", changeTitle: `Fix "#1" <b>${"x".repeat(40)}` }],
      0,
    );
    expect(source).toContain('g3["S3<br/>Fix #quot;#35;1#quot; #lt;b#gt;xxxxxxxxxxxxxxxxxxx…"]');
    expect(shortCandidateId(cand(1))).toBe("cand_00000001…");
    expect(shortCandidateId("cand_x")).toBe("cand_x");
  });
});

describe("generationRows", () => {
  const rows = generationRows(
    [
      { generation: 0, candidateId: null, commit: "a".repeat(40), createdAt: new Date("2026-03-01T08:00:00Z") },
      {
        generation: 1,
        candidateId: cand(1),
        changeId: "chg_1",
        changeTitle: "Add a wishlist page",
        commit: "b".repeat(40),
        createdAt: new Date("2026-03-10T14:25:31Z"),
        promotedBy: { kind: "user", name: "Ada Lovelace" },
        approvedBy: "Grace Hopper",
      },
      {
        generation: 2,
        candidateId: cand(2),
        changeId: "chg_2",
        changeTitle: "Fix the cart total",
        commit: "c".repeat(40),
        createdAt: new Date("2026-03-10T15:00:00Z"),
        promotedBy: { kind: "system", name: "the landing queue" },
        approvedBy: null,
      },
    ],
    2,
  );

  it("lists generation, Change, promoted by, time and commit, newest first", () => {
    expect(rows.map((r) => [r.label, r.change, r.promotedBy, r.approvedBy, r.time, r.shortCommit, r.current])).toEqual([
      ["S2", "Fix the cart total", "the landing queue", null, "2026-03-10 15:00 UTC", "cccccccccc", true],
      ["S1", "Add a wishlist page", "Ada Lovelace", "Grace Hopper", "2026-03-10 14:25 UTC", "bbbbbbbbbb", false],
      ["S0", "the project template", "provisioning", null, "2026-03-01 08:00 UTC", "aaaaaaaaaa", false],
    ]);
    expect(rows[1]).toMatchObject({ changeId: "chg_1", candidateId: cand(1), at: "2026-03-10T14:25:31.000Z" });
  });

  it("names people, never their IDs", () => {
    const shown = rows.flatMap((r) => [r.change, r.promotedBy, r.approvedBy ?? ""]).join(" ");
    expect(shown).not.toMatch(/usr_|landing-queue/);
    expect(generationRows([{ generation: 4, candidateId: cand(4) }], 4)[0]?.promotedBy).toBe("not recorded");
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
