/**
 * What a program Agent did, kept as its transcript (docs/agents.md, Choosing the Agent, "Transcripts"): the
 * worker reads it from the program's JSON output (apps/worker/src/agents/programs/presets.ts), keeps
 * it in the blob store, and the Change page and `rhumbatron task transcript` show it.
 *
 * One step is in the same shape whichever program it was. `at` is the event's own timestamp when
 * the program gives one (Claude Code does; Codex's `exec --json` events carry none).
 */
export type TranscriptStep = { at?: string } & (
  | { kind: "message"; role: "assistant" | "user" | "system"; text: string }
  | { kind: "tool_call"; name: string; input: string }
  | { kind: "command"; text: string; exitCode: number | null; output?: string }
  | { kind: "file_edit"; path: string; change?: string }
  | { kind: "usage"; inputTokens: number; outputTokens: number; costUsd?: number }
  | { kind: "error"; message: string }
);

/** One step in one line, for the CLI and the page: what happened, then its detail. */
export function describeTranscriptStep(s: TranscriptStep): { what: string; detail: string } {
  switch (s.kind) {
    case "message":
      return { what: s.role === "assistant" ? "said" : s.role, detail: s.text };
    case "tool_call":
      return { what: `called ${s.name}`, detail: s.input };
    case "command":
      return { what: `ran (exit ${s.exitCode ?? "?"})`, detail: s.text };
    case "file_edit":
      return { what: s.change ? `edited (${s.change})` : "edited", detail: s.path };
    case "usage":
      return {
        what: "tokens",
        detail: `${s.inputTokens} in, ${s.outputTokens} out${s.costUsd !== undefined ? `, $${s.costUsd.toFixed(4)}` : ""}`,
      };
    case "error":
      return { what: "error", detail: s.message };
  }
}
