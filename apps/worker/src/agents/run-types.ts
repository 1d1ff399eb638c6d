import type { loadRunContext } from "@rhumbatron/db";
import type { WorkerContext } from "../context.ts";

export type RunnerDeps = Pick<
  WorkerContext,
  "db" | "config" | "nudger" | "now" | "source" | "sandbox" | "blobs" | "provider" | "allowlist"
> &
  Partial<Pick<WorkerContext, "agentPrograms" | "credentialSecret">> & {
    /** Test hook: called after the agent's tool loop, before the publish. */
    afterTools?: (workspacePath: string) => Promise<void>;
  };

export type RunResult = {
  /** `woken`: a woken run, received (its detail says whether the Agent went on or stopped, and why). */
  outcome: "completed" | "failed" | "blocked" | "skipped" | "woken";
  detail: string;
  changeSetId?: string;
};

/** What a run reads of its Task, Change, Agent and stack before it starts (loadRunContext). */
export type RunContext = Awaited<ReturnType<typeof loadRunContext>>;
