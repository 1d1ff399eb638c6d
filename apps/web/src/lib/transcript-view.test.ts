import { BLOCKED_LIMITS, type TranscriptStep } from "@rhumbatron/core";
import { describe, expect, it } from "vitest";
import { clip, formatCost, stepRows, transcriptHeadline, transcriptSummaryOf } from "./transcript-view.ts";
import { BLOCKED_LIMIT_MEANING, blockedMeaning } from "./work-graph-chart.ts";

const STORED = {
  key: "agents/p1/r1.json",
  program: "claude-code",
  version: "2.1.3",
  steps: 6,
  inputTokens: 12345,
  outputTokens: 678,
  costUsd: 0.04213,
  reached: ["models.example.com:443"],
  refused: ["registry.npmjs.org:443"],
};

describe("transcript summary", () => {
  it("reads a stored summary, and nothing from a run that kept none or a malformed one", () => {
    expect(transcriptSummaryOf(STORED)).toEqual({
      program: "claude-code",
      version: "2.1.3",
      steps: 6,
      inputTokens: 12345,
      outputTokens: 678,
      costUsd: 0.04213,
      reached: ["models.example.com:443"],
      refused: ["registry.npmjs.org:443"],
    });
    expect(transcriptSummaryOf(null)).toBeNull();
    expect(transcriptSummaryOf({ steps: 3 })).toBeNull();
    expect(transcriptSummaryOf({ program: "codex", costUsd: "free", reached: [1, "a:1"] })).toMatchObject({
      costUsd: null,
      reached: ["a:1"],
      refused: [],
      inputTokens: 0,
    });
  });

  it("says program and version, tokens, cost, and the hosts refused apart from those reached", () => {
    const summary = transcriptSummaryOf(STORED);
    if (!summary) throw new Error("the stored summary was not read");
    const h = transcriptHeadline(summary);
    expect(h).toEqual({
      program: "claude-code 2.1.3",
      tokens: "12,345 tokens in, 678 out",
      cost: "$0.0421",
      reached: "reached models.example.com:443",
      refused: "refused registry.npmjs.org:443",
    });
    const none = transcriptHeadline({ ...summary, reached: [], refused: [], costUsd: null });
    expect(none.reached).toBe("reached no host");
    expect(none.refused).toBeNull();
    expect(none.cost).toBe("cost not reported");
    expect(formatCost(0)).toBe("$0.0000");
  });
});

describe("transcript steps", () => {
  const steps: TranscriptStep[] = [
    { kind: "message", role: "assistant", text: "I will add the line.", at: "2025-05-01T10:00:00Z" },
    { kind: "tool_call", name: "Read", input: '{"path":"README.md"}' },
    { kind: "command", text: "npm test", exitCode: 0, output: "ok" },
    { kind: "command", text: "npm run lint", exitCode: 1, output: "1 problem" },
    { kind: "command", text: "make", exitCode: null },
    { kind: "file_edit", path: "CHANGELOG.md", change: "update" },
    { kind: "usage", inputTokens: 10, outputTokens: 2, costUsd: 0.5 },
    { kind: "error", message: "the model answered 529", at: "not a time" },
  ];
  const rows = stepRows(steps);

  it("keeps the program's order and says each step in words", () => {
    expect(rows.map((r) => [r.what, r.detail])).toEqual([
      ["said", "I will add the line."],
      ["called Read", '{"path":"README.md"}'],
      ["ran (exit 0)", "npm test"],
      ["ran (exit 1)", "npm run lint"],
      ["ran (exit ?)", "make"],
      ["edited (update)", "CHANGELOG.md"],
      ["tokens", "10 in, 2 out, $0.5000"],
      ["error", "the model answered 529"],
    ]);
  });

  it("marks a non-zero or unknown exit and an error as bad, token counts as quiet", () => {
    expect(rows.map((r) => r.tone)).toEqual(["plain", "plain", "plain", "bad", "bad", "plain", "quiet", "bad"]);
  });

  it("keeps a command's output and a step's own time, never an unreadable time", () => {
    expect(rows[2]?.output).toBe("ok");
    expect(rows[4]?.output).toBeNull();
    expect(rows[0]?.at).toBe("2025-05-01T10:00:00Z");
    expect(rows[1]?.at).toBeNull();
    expect(rows[7]?.at).toBeNull();
  });
});

describe("clip", () => {
  it("leaves short text whole", () => {
    expect(clip("short")).toEqual({ shown: "short", hidden: 0 });
  });
  it("cuts at the character limit and says how much is hidden", () => {
    const text = "x".repeat(1000);
    expect(clip(text, 400)).toEqual({ shown: "x".repeat(400), hidden: 600 });
  });
  it("cuts at the line limit before the character limit", () => {
    const text = ["a", "b", "c", "d"].join("\n");
    const r = clip(text, 400, 2);
    expect(r.shown).toBe("a\nb");
    expect(r.shown.length + r.hidden).toBe(text.length);
  });
});

describe("blocked Tasks", () => {
  it("say in words what every limit means and what to do", () => {
    for (const limit of BLOCKED_LIMITS) expect(BLOCKED_LIMIT_MEANING[limit].length, limit).toBeGreaterThan(10);
    expect(blockedMeaning("agent_unavailable")).toMatch(/program or a secret is missing.*retry the Task/);
    expect(blockedMeaning("a_new_limit")).toBe("Blocked by a_new_limit.");
    expect(blockedMeaning(null)).toBeNull();
  });
});
