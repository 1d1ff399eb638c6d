import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { AgentProgramsPanel } from "./agent-programs-panel.tsx";

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
const worker = (agentPrograms: { name: string; package: string; version: string }[]) => ({
  lastHeartbeatAt: "2025-05-01T10:00:00.000Z",
  workerId: "wrk_1",
  stale: false,
  sandbox: null,
  agentPrograms,
});

describe("AgentProgramsPanel", () => {
  it("lists each program the worker reports with its package and version", () => {
    const html = renderToStaticMarkup(
      createElement(AgentProgramsPanel, {
        worker: worker([
          { name: "claude-code", package: "@anthropic-ai/claude-code", version: "2.1.3" },
          { name: "codex", package: "@openai/codex", version: "0.46.0" },
        ]),
      }),
    );
    expect(html).toContain('data-state="ready"');
    expect(text(html)).toContain("claude-code @anthropic-ai/claude-code@2.1.3");
    expect(text(html)).toContain("codex @openai/codex@0.46.0");
  });

  it("says how to install them when the worker has none", () => {
    const html = renderToStaticMarkup(createElement(AgentProgramsPanel, { worker: worker([]) }));
    expect(html).toContain('data-state="empty"');
    expect(text(html)).toContain("npm run setup -- --agent-programs installs Claude Code and Codex");
  });

  it("says to start a worker when none has reported", () => {
    const html = renderToStaticMarkup(createElement(AgentProgramsPanel, { worker: null }));
    expect(html).toContain('data-state="no-worker"');
    expect(text(html)).toContain("No worker has reported yet");
  });
});
