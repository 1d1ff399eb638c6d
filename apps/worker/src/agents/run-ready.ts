import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AgentOutcome,
  type CommandAgent,
  findSecretsIn,
  type ProgramAgent,
  type SandboxWorkspace,
  sourceKeys,
} from "@rhumbatron/core";
import {
  blockTaskForLimit,
  finishAttempt,
  readTenantSecrets,
  recordRunTranscript,
  TenantSecretError,
} from "@rhumbatron/db";
import { runProgramAgent } from "./program-agent.ts";
import { type InstalledProgram, PINNED } from "./programs/install.ts";
import type { RunContext, RunnerDeps, RunResult } from "./run-types.ts";

// Before and around a program or command Agent (runner.ts): its secrets, its install, its run.

export type AgentReady =
  | { ok: true; installed: InstalledProgram | null; secrets: Record<string, string> }
  | { ok: false; result: RunResult };

/**
 * Before a command or program Agent's run takes a Sandbox: a program Agent's program must be
 * installed on this worker, and the tenant secrets the Agent is given (a program's key, a command's
 * `secrets`) set and readable. Anything missing blocks the Task with what to do (not a failure:
 * nothing was tried), and retrying the Task once it is fixed goes on.
 */
export async function readyStep(
  deps: RunnerDeps,
  runId: string,
  ctx: RunContext,
  agent: ProgramAgent | CommandAgent,
): Promise<AgentReady> {
  const installed = agent.kind === "program" ? (deps.agentPrograms?.get(agent.program) ?? null) : null;
  const names = agent.kind === "program" ? [agent.keySecret] : agent.secrets;
  const who = agent.kind === "program" ? agent.program : agent.argv[0];
  let reason: string | null = null;
  let secrets: Record<string, string> = {};
  if (agent.kind === "program" && !installed) {
    const pinned = PINNED[agent.program];
    reason = `this worker has no ${agent.program} (${pinned.package}@${pinned.version}): install the agent programs on its host (npm run setup -- --agent-programs), restart the worker, then retry the Task`;
  } else if (names.length > 0) {
    try {
      secrets = await readTenantSecrets(deps.db, ctx.tenantId, names, deps.credentialSecret);
    } catch (err) {
      if (!(err instanceof TenantSecretError)) throw err;
      const list = err.names.join(", ");
      reason =
        err.kind === "missing"
          ? `the tenant secret ${list} (given to ${who}) is not set: an admin sets it (rhumbatron secrets set ${err.names[0]} --value-stdin), then retry the Task`
          : `the tenant secret ${list} cannot be read with this server's RHUMBATRON_AUTH_SECRET (it changed): an admin sets it again, then retry the Task`;
    }
  }
  if (reason === null) return { ok: true, installed, secrets };
  if (ctx.alternative > 1) return { ok: false, result: await failAttempt(deps, runId, ctx, reason) };
  const { changeId, epoch } = ctx;
  await blockTaskForLimit(
    deps.db,
    { changeId, taskId: ctx.task.taskId, runId, epoch, limit: "agent_unavailable", cause: who, reason },
    deps,
  );
  return { ok: false, result: { outcome: "blocked", detail: reason } };
}

/** Another attempt that cannot run ends failed with the reason; its Task is not held back by it. */
export async function failAttempt(
  deps: RunnerDeps,
  runId: string,
  ctx: RunContext,
  reason: string,
): Promise<RunResult> {
  await finishAttempt(
    deps.db,
    {
      runId,
      epoch: ctx.epoch,
      changeId: ctx.changeId,
      taskId: ctx.task.taskId,
      agentId: ctx.agentId,
      attempt: ctx.alternative,
      outcome: "failed",
      changeSetId: null,
      reason,
    },
    deps,
  );
  return { outcome: "failed", detail: reason };
}

/**
 * Runs the program Agent and keeps its transcript: the steps (secrets cleared) in the blob store,
 * what it reported (tokens, cost, where it reached) on the run.
 */
export async function runProgramStep(
  deps: RunnerDeps,
  runId: string,
  ctx: RunContext,
  agent: ProgramAgent,
  ready: { installed: InstalledProgram; secrets: Record<string, string> },
  ws: SandboxWorkspace,
  task: Parameters<typeof runProgramAgent>[3],
  stack: Parameters<typeof runProgramAgent>[4],
  signal: AbortSignal,
): Promise<AgentOutcome> {
  const apiKey = ready.secrets[agent.keySecret] ?? "";
  const r = await runProgramAgent(ws, agent, ready.installed, task, stack, { apiKey, signal });
  const key = sourceKeys.agentTranscript(ctx.projectId, runId);
  await deps.blobs.put(key, new TextEncoder().encode(JSON.stringify(r.steps)), {
    "content-type": "application/json",
  });
  await recordRunTranscript(
    deps.db,
    { runId, epoch: ctx.epoch },
    {
      key,
      program: agent.program,
      version: ready.installed.version,
      steps: r.steps.length,
      inputTokens: r.usage.inputTokens,
      outputTokens: r.usage.outputTokens,
      costUsd: r.usage.costUsd,
      reached: r.network.reached,
      refused: r.network.refused,
    },
    deps.now(),
  );
  return r.outcome;
}

/** Names of the secrets whose value is in one of `paths` as the checkout holds them. */
export async function secretsInFiles(
  dir: string,
  paths: readonly string[],
  secrets: Readonly<Record<string, string>>,
): Promise<string[]> {
  if (Object.keys(secrets).length === 0) return [];
  const found = new Set<string>();
  for (const path of paths) {
    const bytes = await readFile(join(dir, path)).catch(() => null); // a deleted file holds nothing
    if (bytes) for (const name of findSecretsIn(bytes, secrets)) found.add(name);
  }
  return [...found].sort();
}

/** Whether the Agent may edit outside its Task's declared paths: any but an unallowed command or program Agent. */
export function outsideAllowed(agent: RunContext["agent"]): boolean {
  return agent?.kind === "command" || agent?.kind === "program" ? agent.allowOutsidePaths : true;
}
