import type { TranscriptStep } from "@rhumbatron/core";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { TranscriptHeader, TranscriptTimeline } from "./run-transcript.tsx";

/** The rendered markup's text, tags dropped, whitespace folded: what a reader sees. */
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, " ")
    .replace(/&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, " ")
    .trim();

const STEPS: TranscriptStep[] = [
  { kind: "message", role: "assistant", text: "I will add the line to the changelog.", at: "2025-05-01T10:00:00Z" },
  { kind: "tool_call", name: "Read", input: '{"file_path":"CHANGELOG.md"}' },
  { kind: "command", text: "npm test", exitCode: 0, output: "1 passing" },
  { kind: "command", text: "npm run lint", exitCode: 2, output: `${"lint: bad\n".repeat(20)}` },
  { kind: "file_edit", path: "CHANGELOG.md", change: "update" },
  { kind: "usage", inputTokens: 1200, outputTokens: 80, costUsd: 0.0123 },
  { kind: "error", message: "the model answered 529 overloaded" },
];

describe("TranscriptTimeline", () => {
  const html = renderToStaticMarkup(createElement(TranscriptTimeline, { steps: STEPS }));

  it("shows every step in the program's order, in words", () => {
    const kinds = [...html.matchAll(/data-testid="transcript-step" data-kind="([a-z_]+)"/g)].map((m) => m[1]);
    expect(kinds).toEqual(["message", "tool_call", "command", "command", "file_edit", "usage", "error"]);
    const seen = text(html);
    for (const words of [
      "said I will add the line to the changelog.",
      'called Read {"file_path":"CHANGELOG.md"}',
      "ran (exit 0) npm test 1 passing",
      "ran (exit 2) npm run lint",
      "edited (update) CHANGELOG.md",
      "tokens 1200 in, 80 out, $0.0123",
      "error the model answered 529 overloaded",
    ]) {
      expect(seen).toContain(words);
    }
  });

  it("highlights the non-zero exit and the error, not the passing command", () => {
    const tones = [...html.matchAll(/data-kind="([a-z_]+)" data-tone="([a-z]+)"/g)].map((m) => `${m[1]}:${m[2]}`);
    expect(tones).toEqual([
      "message:plain",
      "tool_call:plain",
      "command:plain",
      "command:bad",
      "file_edit:plain",
      "usage:quiet",
      "error:bad",
    ]);
    expect(html).toMatch(/bg-red-100 text-red-800">ran \(exit 2\)/);
    expect(html).not.toMatch(/bg-red-100 text-red-800">ran \(exit 0\)/);
  });

  it("gives a step its time when the program stamped one", () => {
    expect(html.match(/<time dateTime="2025-05-01T10:00:00Z"/g)).toHaveLength(1);
  });

  it("cuts long output with a show all that says how much is hidden", () => {
    expect(html.match(/data-testid="transcript-show-all"/g)).toHaveLength(1);
    expect(text(html)).toContain("show all (141 more characters)");
    expect(text(html)).not.toContain("lint: bad ".repeat(7));
  });

  it("says so when the program reported no steps", () => {
    expect(text(renderToStaticMarkup(createElement(TranscriptTimeline, { steps: [] })))).toBe(
      "The program reported no steps.",
    );
  });
});

describe("TranscriptHeader", () => {
  const summary = {
    program: "codex",
    version: "0.46.0",
    steps: 7,
    inputTokens: 1200,
    outputTokens: 80,
    costUsd: null,
    reached: ["models.example.com:443"],
    refused: ["evil.example:443"],
  };

  it("says program and version, status, tokens, cost and hosts, the refused ones in a warning tone", () => {
    const html = renderToStaticMarkup(createElement(TranscriptHeader, { summary, status: "completed" }));
    expect(text(html)).toBe(
      "codex 0.46.0 · completed · 1,200 tokens in, 80 out · cost not reported · reached models.example.com:443 · refused evil.example:443",
    );
    expect(html).toMatch(/data-testid="transcript-refused" class="[^"]*bg-amber-100/);
  });

  it("has no refused part when nothing was refused", () => {
    const html = renderToStaticMarkup(
      createElement(TranscriptHeader, { summary: { ...summary, refused: [], reached: [] }, status: "failed" }),
    );
    expect(html).not.toContain("transcript-refused");
    expect(text(html)).toContain("reached no host");
  });
});
