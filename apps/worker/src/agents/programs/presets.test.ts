import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { claudeCode, codex, geminiCli, opencode } from "./presets.ts";

// The parsers on what the real programs printed (recorded/: claude-code.jsonl and codex.jsonl from
// programs.test.ts with RHUMBATRON_AGENT_PROGRAMS_RECORD set; the others from runs against a
// stand-in that refused a request, a scripted Edit of an unread file, and a failing command;
// gemini-cli-failures.jsonl and opencode-failures.jsonl from each run against its stand-in scripted
// to run a command that exits 3, then edit text the file does not hold, then stop).

const recorded = (name: string) => readFileSync(join(import.meta.dirname, "recorded", name), "utf8");

describe("Claude Code's stream-json as transcript steps", () => {
  it("a read, an edit, a command with its exit code, the final message and usage, each timestamped", () => {
    const steps = claudeCode.parse(recorded("claude-code.jsonl"));
    expect(steps.map((s) => s.kind)).toEqual([
      "tool_call",
      "tool_call",
      "file_edit",
      "tool_call",
      "command",
      "message",
      "usage",
    ]);
    expect(steps[0]).toMatchObject({ name: "Read", input: '{"file_path":"/workspace/cand-claude/greet.mjs"}' });
    expect(steps[2]).toMatchObject({ kind: "file_edit", path: "/workspace/cand-claude/greet.mjs", change: "Edit" });
    expect(steps[4]).toMatchObject({ kind: "command", text: "node --test", exitCode: 0 });
    expect(steps[5]).toMatchObject({
      role: "assistant",
      text: "Done: the greeting now ends with an exclamation mark and the test passes.",
    });
    expect(steps[6]).toEqual({ kind: "usage", inputTokens: 630, outputTokens: 103, costUsd: expect.any(Number) });
    for (const s of steps.slice(0, 6)) expect(s.at).toMatch(/^2026-\d\d-\d\dT/);
  });

  it("a refused edit is an error, not an edit; a failing command keeps its exit code", () => {
    const steps = claudeCode.parse(recorded("claude-code-edit-refused.jsonl"));
    expect(steps.filter((s) => s.kind === "file_edit")).toEqual([]);
    expect(steps).toContainEqual(
      expect.objectContaining({
        kind: "error",
        message: expect.stringContaining("Edit: <tool_use_error>File has not been read yet"),
      }),
    );
    expect(steps).toContainEqual(expect.objectContaining({ kind: "command", text: "node --test", exitCode: 1 }));
  });

  it("a model endpoint that refuses is an error step, not the final message", () => {
    const steps = claudeCode.parse(recorded("claude-code-model-error.jsonl"));
    expect(steps.filter((s) => s.kind === "message")).toEqual([]);
    expect(steps.filter((s) => s.kind === "error").map((s) => (s as { message: string }).message)).toEqual([
      "API Error: 400 stop",
      "api_error: API Error: 400 stop",
    ]);
  });

  it("a line that is not JSON becomes an error step and the rest still parses", () => {
    const steps = claudeCode.parse(`Segmentation fault\n${recorded("claude-code.jsonl")}`);
    expect(steps[0]).toEqual({ kind: "error", message: "not JSON: Segmentation fault" });
    expect(steps.filter((s) => s.kind === "command")).toHaveLength(1);
  });
});

describe("Codex's exec --json as transcript steps", () => {
  it("commands with exit codes and output, the patched file, the final message and usage", () => {
    const steps = codex.parse(recorded("codex.jsonl"));
    expect(steps.map((s) => s.kind)).toEqual(["command", "file_edit", "command", "message", "usage"]);
    expect(steps[0]).toMatchObject({ text: "/usr/bin/bash -lc 'cat NOTES.md'", exitCode: 0 });
    expect((steps[0] as { output: string }).output).toContain("exclamation mark");
    expect(steps[1]).toEqual({ kind: "file_edit", path: "/workspace/cand-codex/greet.mjs", change: "update" });
    expect(steps[2]).toMatchObject({ text: "/usr/bin/bash -lc 'node --test'", exitCode: 0 });
    expect(steps[4]).toEqual({ kind: "usage", inputTokens: 300 + 100 + 110 + 120, outputTokens: 40 + 20 + 21 + 22 });
  });

  it("a failing command keeps its exit code", () => {
    const steps = codex.parse(recorded("codex-command-failed.jsonl"));
    const commands = steps.filter((s) => s.kind === "command") as { text: string; exitCode: number | null }[];
    expect(commands.map((c) => c.exitCode)).toEqual([0, 1, 1]);
    expect(commands[1]?.text).toContain("cat missing-file.txt");
  });

  it("a refused model call is an error step", () => {
    const steps = codex.parse(recorded("codex-model-error.jsonl"));
    expect(steps.map((s) => s.kind)).toEqual(["error", "error"]);
    expect((steps[0] as { message: string }).message).toContain('"message":"stop"');
  });
});

describe("Gemini CLI's stream-json as transcript steps", () => {
  it("a failing command keeps its exit code, a refused edit is an error, the deltas make one message, tokens from its result", () => {
    const steps = geminiCli.parse(recorded("gemini-cli-failures.jsonl"));
    expect(steps.map((s) => s.kind)).toEqual(["tool_call", "command", "tool_call", "error", "message", "usage"]);
    expect(steps[1]).toMatchObject({ kind: "command", text: "node -e 'process.exit(3)'", exitCode: 3 });
    expect(steps[3]).toMatchObject({ kind: "error", message: expect.stringMatching(/^replace: Could not find/) });
    expect(steps[4]).toMatchObject({ kind: "message", role: "assistant", text: "gave up" });
    expect(steps[5]).toEqual({ kind: "usage", inputTokens: 330, outputTokens: 63 });
    for (const s of steps.slice(0, 5)) expect(s.at).toMatch(/^2026-\d\d-\d\dT/);
  });
});

describe("OpenCode's run --format json as transcript steps", () => {
  it("a failing command keeps its exit code, a refused edit is an error, tokens after each model call", () => {
    const steps = opencode.parse(recorded("opencode-failures.jsonl"));
    expect(steps.map((s) => s.kind)).toEqual([
      "tool_call",
      "command",
      "usage",
      "tool_call",
      "error",
      "usage",
      "message",
      "usage",
    ]);
    expect(steps[1]).toMatchObject({ kind: "command", text: "node -e 'process.exit(3)'", exitCode: 3 });
    expect(steps[4]).toMatchObject({
      kind: "error",
      message: expect.stringMatching(/^edit: Could not find oldString/),
    });
    expect(steps.filter((s) => s.kind === "file_edit")).toEqual([]);
    expect(steps[6]).toMatchObject({ kind: "message", text: "gave up" });
    expect(steps.filter((s) => s.kind === "usage").map((s) => (s as { inputTokens: number }).inputTokens)).toEqual([
      100, 110, 120,
    ]);
    for (const s of steps.filter((s) => s.kind !== "usage")) expect(s.at).toMatch(/^2026-\d\d-\d\dT/);
  });
});
