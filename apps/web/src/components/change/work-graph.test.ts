import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { WorkGraph, type WorkGraphTask } from "./work-graph.tsx";

const task = (key: string, over: Partial<WorkGraphTask>): WorkGraphTask => ({
  id: `tsk_${key}`,
  key,
  title: key,
  state: "completed",
  dependencies: [],
  blockedLimit: null,
  agentId: null,
  intents: { paths: ["CHANGELOG.md"] },
  ...over,
});

describe("WorkGraph's Task list", () => {
  it("says why a Task is blocked: what the limit means, then what its run said to do", () => {
    const reason =
      "this worker has no codex (@openai/codex@0.46.0): install the agent programs on its host (npm run setup -- --agent-programs), restart the worker, then retry the Task";
    const html = renderToStaticMarkup(
      createElement(WorkGraph, {
        tasks: [
          task("done", {}),
          task("stuck", { state: "blocked", blockedLimit: "agent_unavailable" }),
          task("meter", { state: "blocked", blockedLimit: "sandbox_meter" }),
        ],
        blockedReasons: new Map([["tsk_stuck", reason]]),
      }),
    );
    const reasons = [...html.matchAll(/data-testid="task-blocked-reason"[^>]*>(.*?)<\/p>/g)].map((m) =>
      (m[1] ?? "").replace(/<[^>]+>/g, ""),
    );
    expect(reasons).toEqual([
      `Its Agent cannot run on this worker (a program or a secret is missing): do what its run says, then retry the Task. Its run says: ${reason}`,
      "The Sandbox budget or workspace limit refused its run: raise it on Operations, Meters, or wait.",
    ]);
  });
});
