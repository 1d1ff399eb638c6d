import { describeTranscriptStep, type TranscriptStep } from "@rhumbatron/core";

/**
 * What the Change page shows of a program Agent's transcript (docs/coding-agents.md, "Transcripts"): the run's
 * summary as one header line, and each step as a row of the timeline. Pure, so the words and tones
 * are tested without a browser.
 */

/** What a run reported beside its steps (packages/db RunTranscript, as it arrives over the API). */
export interface TranscriptSummary {
  program: string;
  version: string;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  reached: string[];
  refused: string[];
}

/** A stored `agent_runs.transcript` read back: the summary when it has the expected shape, else null. */
export function transcriptSummaryOf(value: unknown): TranscriptSummary | null {
  if (!value || typeof value !== "object") return null;
  const o = value as Record<string, unknown>;
  const strings = (x: unknown) => (Array.isArray(x) ? x.filter((s): s is string => typeof s === "string") : []);
  const count = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  if (typeof o.program !== "string") return null;
  return {
    program: o.program,
    version: typeof o.version === "string" ? o.version : "",
    steps: count(o.steps),
    inputTokens: count(o.inputTokens),
    outputTokens: count(o.outputTokens),
    costUsd: typeof o.costUsd === "number" && Number.isFinite(o.costUsd) ? o.costUsd : null,
    reached: strings(o.reached),
    refused: strings(o.refused),
  };
}

export const formatCost = (usd: number | null) => (usd === null ? "cost not reported" : `$${usd.toFixed(4)}`);

/** The header's parts, in the order they are read. */
export function transcriptHeadline(s: TranscriptSummary): {
  program: string;
  tokens: string;
  cost: string;
  reached: string;
  refused: string | null;
} {
  return {
    program: s.version ? `${s.program} ${s.version}` : s.program,
    tokens: `${s.inputTokens.toLocaleString("en-US")} tokens in, ${s.outputTokens.toLocaleString("en-US")} out`,
    cost: formatCost(s.costUsd),
    reached: s.reached.length ? `reached ${s.reached.join(", ")}` : "reached no host",
    // Refused hosts are worth a look (the program tried to go somewhere it may not): said apart.
    refused: s.refused.length ? `refused ${s.refused.join(", ")}` : null,
  };
}

export type StepTone = "plain" | "bad" | "quiet";

export interface StepRow {
  kind: TranscriptStep["kind"];
  what: string;
  detail: string;
  /** The command's own output, when the program gave it. */
  output: string | null;
  tone: StepTone;
  /** ISO time of the step when the program stamped it; null for programs that do not (Codex). */
  at: string | null;
}

/** One row per step, in the program's order: a non-zero exit and an error are `bad`, token counts `quiet`. */
export function stepRows(steps: readonly TranscriptStep[]): StepRow[] {
  return steps.map((s) => {
    const { what, detail } = describeTranscriptStep(s);
    const bad = s.kind === "error" || (s.kind === "command" && s.exitCode !== 0);
    const at = s.at && !Number.isNaN(Date.parse(s.at)) ? s.at : null;
    return {
      kind: s.kind,
      what,
      detail,
      output: s.kind === "command" && s.output ? s.output : null,
      tone: bad ? "bad" : s.kind === "usage" ? "quiet" : "plain",
      at,
    };
  });
}

/** Text longer than this (or than `CLIP_LINES` lines) is cut on the page, with "show all". */
export const CLIP_CHARS = 400;
export const CLIP_LINES = 6;

/** The first part of a long text and how much was left out (`hidden` 0: nothing was cut). */
export function clip(text: string, chars = CLIP_CHARS, lines = CLIP_LINES): { shown: string; hidden: number } {
  let end = Math.min(text.length, chars);
  let newlines = 0;
  for (let i = 0; i < end; i++) {
    if (text[i] === "\n" && ++newlines === lines) {
      end = i;
      break;
    }
  }
  return { shown: text.slice(0, end), hidden: text.length - end };
}
