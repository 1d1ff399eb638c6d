import { existsSync } from "node:fs";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AgentOutcome,
  type ContextPacket,
  canonicalRepo,
  DomainError,
  scriptedProvider,
  workspaceFork,
} from "@rhumbatron/core";
import {
  admitSandbox,
  blockTaskForLimit,
  canonicalGenerationOf,
  changeSetOfRun,
  isRunSuperseded,
  loadRunContext,
  markRun,
  openReservation,
  receiveWake,
  recordRunStart,
  releaseSandboxAdmission,
  reserveSandboxSeconds,
  retryAfterStartFailure,
  type SandboxReservation,
  START_FAILURE,
  withRepoTokens,
} from "@rhumbatron/db";
import { syncCanonical } from "../source/sync.ts";
import { runCommandAgent } from "./command-agent.ts";
import { agentRunContext } from "./context-packet.ts";
import { type OpenRun, openRunStep } from "./run-open.ts";
import { composeDependencies, publishStep } from "./run-publish.ts";
import { type AgentReady, failAttempt, readyStep, runProgramStep } from "./run-ready.ts";
import type { RunContext, RunnerDeps, RunResult } from "./run-types.ts";
import { workspaceTools } from "./toolbox.ts";

export type { RunnerDeps, RunResult } from "./run-types.ts";

/**
 * One Agent run, end to end (docs/workflows.md, Agent run): admit, reserve, fork canonical as
 * ws-<run>, check out the base and stack the ChangeSets this Task depends on, pick and record the
 * run's Context Packet from the base tree's file index (context-packet.ts), run the tool loop,
 * commit, push with a write token, revoke, publish the ChangeSet with its stored patch, settle the
 * meter, remove the run directory, complete the Task. Wakes for the Task reach the run while it
 * works (wakes.ts); a woken run that no running work took is received here.
 */
const RUN_MARKER = "rhumbatron-run";

export async function executeRun(deps: RunnerDeps, runId: string): Promise<RunResult> {
  try {
    return await executeHeldRun(deps, runId);
  } catch (err) {
    // Another runner took the run over while this one worked (its beat was late, or the run went
    // stale): the run, its Task and its ChangeSet are the taker's, and this one recorded nothing.
    if (isRunSuperseded(err)) return { outcome: "skipped", detail: `superseded: ${err.message}` };
    throw err;
  }
}

async function executeHeldRun(deps: RunnerDeps, runId: string): Promise<RunResult> {
  const ctx = await loadRunContext(deps.db, runId);
  if (ctx.reason !== "dispatch" && ctx.alternative === 1) {
    // A wake that no running work of the Agent took (it ended, or runs elsewhere): checked against the state now.
    const r = await receiveWake(deps.db, { runId, editedPaths: [] }, deps);
    return { outcome: "woken", detail: r?.note ?? "the wake was received already" };
  }
  // Another attempt runs while its Task runs or once it completed (docs/attempts.md).
  const alive = ctx.alternative === 1 ? ["running"] : ["running", "completed"];
  if (!alive.includes(ctx.taskState)) {
    await markRun(deps.db, { runId, epoch: ctx.epoch }, "failed", `task is ${ctx.taskState}`, deps.now());
    return { outcome: "skipped", detail: `task is ${ctx.taskState}` };
  }
  const unreviewed = ctx.agent?.kind === "program" || ctx.agent?.kind === "command" ? ctx.agent : null;
  const ready = unreviewed ? await readyStep(deps, runId, ctx, unreviewed) : null;
  if (ready && !ready.ok) return ready.result;
  const secrets = ready?.ok ? ready.secrets : {};
  const reserved = await reserveStep(deps, runId, ctx);
  if (!reserved.ok) return reserved.result;
  const run = await openRunStep(deps, runId, ctx, reserved.reservation);
  // A runner lost after its ChangeSet was published and before it finished the run: the work is
  // out, and running the Agent again would only be refused at its push. Finish with what it published.
  const published = ctx.startCommit ? await changeSetOfRun(deps.db, runId) : null;
  if (published) {
    return run.finish("completed", "restored: its ChangeSet was published before its runner was lost", published);
  }
  // Until the Agent starts, a failure is this system's own (fork, checkout, Context Packet).
  let agentStarted = false;
  try {
    const { base, start } = await prepareStep(deps, runId, ctx, run.ws.path);
    const { task } = ctx;
    const planPaths = (task.editPlan ?? []).flatMap((s) => ("path" in s ? [s.path] : []));
    const context = await agentRunContext(deps, {
      runId,
      projectId: ctx.projectId,
      base,
      task: { title: task.title, intents: task.intents, planPaths },
      repair: { changeId: ctx.changeId, taskKey: task.key },
    });
    // Wakes sent while the run waited reach it before the Agent starts (it starts from the state now).
    await run.wakes.poll();
    // run_command runs only allowlisted executables: the project's own list if it has one, else the default.
    // list_files answers from the base tree's index, with what the stacked ChangeSets changed on top.
    const tools = workspaceTools(run.ws, {
      allowlist: ctx.commandAllowlist.length ? ctx.commandAllowlist : deps.allowlist,
      commandTimeoutMs: deps.config.sandbox.commandTimeoutSeconds * 1000,
      signal: run.cancel.signal,
      listing: { paths: context.indexPaths, overlay: ctx.stack.flatMap((s) => s.paths) },
    });
    agentStarted = true;
    const agent = ctx.agent;
    if (agent?.kind === "model" && deps.provider.name === scriptedProvider.name) {
      return await run.finish(
        "failed",
        "this Task's Agent is the model, but the worker has no model endpoint: set AGENT_MODEL_URL (docs/agents.md), or choose another Agent",
      );
    }
    const provider = agent?.kind === "scripted" ? scriptedProvider : deps.provider;
    const stack = ctx.stack.map((s) => ({ taskKey: s.taskKey, paths: s.paths }));
    const outcome = await agentOutcome({ deps, runId, ctx, run, ready, secrets, context, stack, tools, provider });
    if (run.cancel.signal.aborted) return await run.finish("failed", "cancelled");
    await deps.afterTools?.(run.ws.path);
    if (outcome.status === "failed") return await run.finish("failed", outcome.summary);
    // A lost Sandbox loses uncommitted edits: publishing now would publish partial work.
    const marker = join(run.ws.path, ".git", RUN_MARKER);
    if (!existsSync(marker) || !(await readFile(marker, "utf8")).startsWith(runId)) {
      return await run.finish(
        "failed",
        "the Sandbox was lost before the work was committed; uncommitted edits are gone, so nothing was published",
      );
    }
    const published = await publishStep(deps, runId, ctx, run.ws.path, start, secrets);
    if (typeof published !== "string") return await run.finish("failed", published.refused);
    return await run.finish("completed", outcome.summary, published);
  } catch (err) {
    return failedRun(deps, ctx, run, agentStarted, err);
  }
}

/**
 * Step `reserve`: admission and the run's Sandbox seconds. One reservation per run (sbxres_<run>):
 * a run picked up again after its runner crashed reuses the open one (and its admitted workspace)
 * instead of counting the same run twice. A refusal blocks the Task with the limit it hit.
 */
async function reserveStep(
  deps: RunnerDeps,
  runId: string,
  ctx: RunContext,
): Promise<{ ok: true; reservation: SandboxReservation } | { ok: false; result: RunResult }> {
  const admission = { changeId: ctx.changeId, projectId: ctx.projectId };
  const reservationId = `sbxres_${runId}`;
  try {
    const held = await openReservation(deps.db, reservationId, { kind: "agent", changeId: ctx.changeId }, deps.config);
    if (held) return { ok: true, reservation: held };
    await admitSandbox(deps.db, admission, deps.config);
    try {
      const reservation = await reserveSandboxSeconds(
        deps.db,
        { kind: "agent", changeId: ctx.changeId, id: reservationId },
        deps.config,
        deps.now(),
      );
      return { ok: true, reservation };
    } catch (err) {
      await releaseSandboxAdmission(deps.db, admission);
      throw err;
    }
  } catch (err) {
    if (!(err instanceof DomainError && err.code === "PRECONDITION_FAILED")) throw err;
    const cause = typeof err.details?.limit === "string" ? err.details.limit : null;
    if (ctx.alternative > 1) return { ok: false, result: await failAttempt(deps, runId, ctx, err.message) };
    const { changeId, epoch } = ctx;
    await blockTaskForLimit(
      deps.db,
      { changeId, taskId: ctx.task.taskId, runId, epoch, limit: "sandbox_meter", cause, reason: err.message },
      deps,
    );
    return { ok: false, result: { outcome: "blocked", detail: err.message } };
  }
}

/**
 * Step `prepare`: fork canonical on first write, check out the base (or the recorded start after a
 * loss), start from the composition of the Tasks this one depends on, record the start. One token
 * bundle (read canonical; read the fork, or write it when restoring). Returns the base commit
 * (canonical's, whose index the run reads) and the commit the Agent's work starts from (the base
 * with the stack composed on it).
 *
 * Restoring after a loss puts back what the lost attempt may have left: its files in the run
 * directory (a killed worker leaves the directory; files the new attempt never writes would be
 * committed with its work) and its commit on the fork's main (a runner lost between its push and
 * its ChangeSet; the new attempt's commit on the start would be refused as not a fast-forward).
 */
async function prepareStep(
  deps: RunnerDeps,
  runId: string,
  ctx: RunContext,
  dir: string,
): Promise<{ base: string; start: string }> {
  const canonical = canonicalRepo(ctx.projectId);
  const fork = workspaceFork(runId);
  const restoring = ctx.startCommit !== null;
  if (restoring) await emptyRunDirectory(dir);
  // A ChangeSet recorded from the fork names the commit on its main: that commit is never moved back.
  const published = restoring && (await changeSetOfRun(deps.db, runId)) !== null;
  // Main catches up with the last promotion first (its release or index build may not have moved
  // it yet), so a new run starts from the current generation, not the one before it.
  if (!restoring) {
    const current = await canonicalGenerationOf(deps.db, ctx.projectId);
    if (current !== null) await syncCanonical(deps, ctx.projectId, current);
  }
  const start = await withRepoTokens(
    deps.db,
    [
      { repo: canonical, mode: "read", purpose: `fork ${fork}` },
      restoring
        ? { repo: fork, mode: "write", purpose: `restore ${runId}` }
        : { repo: fork, mode: "read", purpose: `checkout ${runId}` },
    ],
    deps.config,
    deps.now,
    async ([canonicalToken = "", forkToken = ""]) => {
      // The work starts from the fork's own main, read after the copy. (Reading canonical's head
      // first raced a promotion: the copy then held a newer main, and the Agent's commit on the older
      // head was refused at publish as not a fast-forward of the fork.)
      await deps.source.fork(canonical, canonicalToken, fork);
      const head = await deps.source.head(fork, forkToken);
      const from = ctx.startCommit ?? head;
      // The fork is this run's own and no ChangeSet records what the lost attempt pushed there, so
      // main goes back to the recorded start; rewind moves it only to an ancestor, so nothing but
      // the commits made on that start leaves main.
      if (ctx.startCommit && head !== ctx.startCommit && !published) {
        await deps.source.rewind(fork, forkToken, ctx.startCommit);
      }
      await deps.source.checkout(fork, forkToken, dir, from);
      return from;
    },
  );
  const stacked = await composeDependencies(deps, ctx.stack, dir, start, ctx.task.key);
  await recordRunStart(deps.db, { runId, epoch: ctx.epoch }, fork, start, deps.now());
  await writeFile(join(dir, ".git", RUN_MARKER), `${runId} ${start}\n`);
  return { base: start, start: stacked };
}

/**
 * Empties the run directory, keeping the directory itself: it is the Sandbox workspace the run
 * opened, whose commands run there and answer UNAVAILABLE (Sandbox loss) once it is gone.
 */
async function emptyRunDirectory(dir: string): Promise<void> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [];
    throw err;
  });
  await Promise.all(names.map((name) => rm(join(dir, name), { recursive: true, force: true })));
}

/** Runs the Task's Agent: a command, an installed program, or the tool loop of a model or the scripted plan. */
function agentOutcome({
  deps,
  runId,
  ctx,
  run,
  ready,
  secrets,
  context,
  stack,
  tools,
  provider,
}: {
  deps: RunnerDeps;
  runId: string;
  ctx: RunContext;
  run: OpenRun;
  ready: AgentReady | null;
  secrets: Record<string, string>;
  context: { packet: ContextPacket };
  stack: { taskKey: string; paths: string[] }[];
  tools: ReturnType<typeof workspaceTools>;
  provider: RunnerDeps["provider"];
}): Promise<AgentOutcome> {
  const { task } = ctx;
  const agent = ctx.agent;
  return agent?.kind === "command"
    ? runCommandAgent(run.ws, agent, { ...task, context: context.packet }, stack, {
        secrets,
        signal: run.cancel.signal,
      })
    : agent?.kind === "program" && ready?.ok && ready.installed
      ? runProgramStep(
          deps,
          runId,
          ctx,
          agent,
          { installed: ready.installed, secrets },
          run.ws,
          { ...task, context: context.packet },
          stack,
          run.cancel.signal,
        )
      : provider.run({ ...task, context: context.packet }, run.wakes.tools(tools), run.cancel.signal, run.wakes.inbox);
}

/**
 * A run that threw: before its Agent started the failure is this system's own, and a first attempt
 * is retried. A run taken over by another runner ends here with nothing recorded.
 */
async function failedRun(
  deps: RunnerDeps,
  ctx: RunContext,
  run: OpenRun,
  agentStarted: boolean,
  err: unknown,
): Promise<RunResult> {
  if (isRunSuperseded(err)) {
    await run.leave();
    throw err;
  }
  const message = err instanceof Error ? err.message : String(err);
  if (agentStarted) return run.finish("failed", `the run failed: ${message}`);
  const result = await run.finish("failed", `${START_FAILURE} ${message}`);
  if (
    ctx.alternative === 1 &&
    result.outcome === "failed" &&
    (await retryAfterStartFailure(deps.db, { taskId: ctx.task.taskId, changeId: ctx.changeId }, deps))
  ) {
    return { ...result, detail: `${result.detail} (the Task is retried by itself)` };
  }
  return result;
}
