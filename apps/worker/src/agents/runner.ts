import { existsSync } from "node:fs";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AgentOutcome,
  appendOnlyMatcher,
  type CommandAgent,
  canonicalRepo,
  DomainError,
  dirForAgentRun,
  findSecretsIn,
  type ProgramAgent,
  pathsOutside,
  type SandboxWorkspace,
  scriptedProvider,
  sourceKeys,
  workspaceFork,
} from "@rhumbatron/core";
import {
  admitSandbox,
  blockTaskForLimit,
  canonicalGenerationOf,
  changeSetOfRun,
  finishAttempt,
  finishTask,
  loadRunContext,
  markRun,
  openReservation,
  publishChangeSet,
  readTenantSecrets,
  receiveWake,
  recordRunStart,
  recordRunTranscript,
  releaseSandboxAdmission,
  reserveSandboxSeconds,
  retryAfterStartFailure,
  type SandboxReservation,
  START_FAILURE,
  settleSandbox,
  TenantSecretError,
  taskCancelled,
  withRepoTokens,
} from "@rhumbatron/db";
import type { WorkerContext } from "../context.ts";
import { storePatch } from "../source/code-store.ts";
import { syncCanonical } from "../source/sync.ts";
import { checksFileInCheckout } from "../verification/project-checks.ts";
import { runCommandAgent } from "./command-agent.ts";
import { agentRunContext } from "./context-packet.ts";
import { runProgramAgent } from "./program-agent.ts";
import { type InstalledProgram, PINNED } from "./programs/install.ts";
import { workspaceTools } from "./toolbox.ts";
import { type WakeDelivery, wakeDelivery } from "./wakes.ts";

/**
 * One Agent run, end to end (docs/workflows.md, Agent run): admit, reserve, fork canonical as
 * ws-<run>, check out the base and stack the ChangeSets this Task depends on, pick and record the
 * run's Context Packet from the base tree's file index (context-packet.ts), run the tool loop,
 * commit, push with a write token, revoke, publish the ChangeSet with its stored patch, settle the
 * meter, remove the run directory, complete the Task. Wakes for the Task reach the run while it
 * works (wakes.ts); a woken run that no running work took is received here.
 */
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

const RUN_MARKER = "rhumbatron-run";

export async function executeRun(deps: RunnerDeps, runId: string): Promise<RunResult> {
  const ctx = await loadRunContext(deps.db, runId);
  if (ctx.reason !== "dispatch" && ctx.alternative === 1) {
    // A wake that no running work of the Agent took (it ended, or runs elsewhere): checked against the state now.
    const r = await receiveWake(deps.db, { runId, editedPaths: [] }, deps);
    return { outcome: "woken", detail: r?.note ?? "the wake was received already" };
  }
  // Another attempt runs while its Task runs or once it completed (docs/attempts.md).
  const alive = ctx.alternative === 1 ? ["running"] : ["running", "completed"];
  if (!alive.includes(ctx.taskState)) {
    await markRun(deps.db, runId, "failed", `task is ${ctx.taskState}`, deps.now());
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
    const outcome =
      agent?.kind === "command"
        ? await runCommandAgent(run.ws, agent, { ...task, context: context.packet }, stack, {
            secrets,
            signal: run.cancel.signal,
          })
        : agent?.kind === "program" && ready?.ok && ready.installed
          ? await runProgramStep(
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
          : await provider.run(
              { ...task, context: context.packet },
              run.wakes.tools(tools),
              run.cancel.signal,
              run.wakes.inbox,
            );
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
}

type RunContext = Awaited<ReturnType<typeof loadRunContext>>;

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
    await blockTaskForLimit(
      deps.db,
      { changeId: ctx.changeId, taskId: ctx.task.taskId, runId, limit: "sandbox_meter", cause, reason: err.message },
      deps,
    );
    return { ok: false, result: { outcome: "blocked", detail: err.message } };
  }
}

interface OpenRun {
  ws: SandboxWorkspace;
  cancel: { signal: AbortSignal; stop(): Promise<void> };
  wakes: WakeDelivery;
  /** Settle the meter, remove the run directory, then record the run and finish the Task (or note the cancel). */
  finish(outcome: "completed" | "failed", detail: string, changeSetId?: string): Promise<RunResult>;
}

/** The run directory, the cancel watch, and how the run ends whatever happens in between. */
async function openRunStep(
  deps: RunnerDeps,
  runId: string,
  ctx: RunContext,
  reservation: SandboxReservation,
): Promise<OpenRun> {
  const started = deps.now();
  const ws = await deps.sandbox.open({ projectId: ctx.projectId, dirName: dirForAgentRun(runId) });
  const wakes = wakeDelivery(deps, { changeId: ctx.changeId, taskId: ctx.task.taskId });
  const cancel = watchForCancel(deps, ctx.task.taskId, () => wakes.poll());
  const finish: OpenRun["finish"] = async (outcome, detail, changeSetId) => {
    await cancel.stop();
    const wallSeconds = Math.ceil((deps.now().getTime() - started.getTime()) / 1000);
    await settleSandbox(deps.db, reservation, { wallSeconds, billing: deps.sandbox.billing }, deps.config);
    await ws.remove().catch(() => {});
    if (cancel.signal.aborted) {
      // The Change was cancelled under the run: its Task is blocked already; nothing is published.
      await markRun(deps.db, runId, "cancelled", "the Change was cancelled", deps.now());
      return { outcome: "skipped", detail: "cancelled: the Change was cancelled while the Agent worked" };
    }
    await markRun(deps.db, runId, outcome, outcome === "failed" ? detail : null, deps.now());
    const task = { taskId: ctx.task.taskId, runId, agentId: ctx.agentId, changeSetId: changeSetId ?? null };
    if (ctx.alternative > 1)
      await finishAttempt(
        deps.db,
        { ...task, changeId: ctx.changeId, attempt: ctx.alternative, outcome, reason: detail },
        deps,
      );
    else await finishTask(deps.db, { ...task, outcome, reason: detail }, deps);
    return { outcome, detail, ...(changeSetId ? { changeSetId } : {}) };
  };
  return { ws, cancel, wakes, finish };
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
  await recordRunStart(deps.db, runId, fork, start, deps.now());
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

/** The folder of the project's checks file (core checks-file.ts): what a command Agent may not edit. */
const GATE_FOLDER = ".rhumbatron";

/**
 * Step `publish`: commit the Agent's work, push it to the fork and read its diff (one token
 * bundle), store the patch, publish the ChangeSet. Returns the ChangeSet's ID, or null when the
 * diff is refused (a command Agent's edit of the checks file): nothing is published then.
 */
async function publishStep(
  deps: RunnerDeps,
  runId: string,
  ctx: RunContext,
  dir: string,
  base: string,
  secrets: Readonly<Record<string, string>>,
): Promise<string | { refused: string }> {
  const { task } = ctx;
  const fork = workspaceFork(runId);
  const who = { name: ctx.agentId, email: `${ctx.agentId}@agents.rhumbatron.local` };
  const commit = (await deps.source.commitAll(dir, `${task.key}: ${task.title}\n\nRun ${runId}`, who)) ?? base;
  const diff = await withRepoTokens(
    deps.db,
    [{ repo: fork, mode: "write", purpose: `push ${runId}` }],
    deps.config,
    deps.now,
    async ([token = ""]) => {
      await deps.source.push(dir, fork, token);
      return deps.source.diff(fork, token, base, commit);
    },
  );
  // A command Agent runs a program nobody reviewed: it may not edit the gate that judges its work.
  const unreviewed = ctx.agent?.kind === "command" || ctx.agent?.kind === "program";
  if (unreviewed && diff.paths.some((p) => p === GATE_FOLDER || p.startsWith(`${GATE_FOLDER}/`))) {
    return {
      refused: `refused: the Agent edited the checks file (${GATE_FOLDER}), which a command or program Agent may not; nothing was published`,
    };
  }
  // A secret the run was given never leaves it in the tree: the commit stays on the run's own fork.
  const leaked = await secretsInFiles(dir, diff.paths, secrets);
  if (leaked.length) {
    return {
      refused: `refused: the Agent wrote the value of the secret ${leaked.join(", ")} into ${leaked.length === 1 ? "a file" : "files"} of its diff; nothing was published`,
    };
  }
  const changeSetId = `cs_${runId.slice(4)}`;
  const patch = diff.patch
    ? await storePatch(
        deps.blobs,
        sourceKeys.changesetPatch(ctx.projectId, changeSetId),
        diff.patch,
        deps.config.source.patchMaxBytes,
      )
    : null;
  await publishChangeSet(
    deps.db,
    {
      runId,
      changeId: ctx.changeId,
      taskId: task.taskId,
      agentId: ctx.agentId,
      fork,
      baseCommit: base,
      commit,
      paths: diff.paths,
      // An unreviewed program's edits outside the Task's paths are a gate gap unless it was allowed them.
      outsidePaths: outsideAllowed(ctx.agent) ? [] : pathsOutside(diff.paths, task.intents),
      changeSetId,
      patch: patch ? { key: patch.key, bytes: patch.fullBytes, truncated: patch.truncated } : null,
      changedLines: changedLines(diff.patch),
    },
    deps,
  );
  return changeSetId;
}

/** Lines a unified diff adds and removes (its file headers not counted). */
export function changedLines(patch: string): number {
  let n = 0;
  for (const line of patch.split("\n")) {
    if ((line.startsWith("+") && !line.startsWith("+++ ")) || (line.startsWith("-") && !line.startsWith("--- "))) n++;
  }
  return n;
}

async function composeDependencies(
  deps: RunnerDeps,
  stack: { changeSetId: string; taskKey: string; fork: string; baseCommit: string; commit: string }[],
  dir: string,
  start: string,
  taskKey: string,
): Promise<string> {
  if (stack.length === 0) return start;
  return withRepoTokens(
    deps.db,
    stack.map((s) => ({ repo: s.fork, mode: "read" as const, purpose: "stack" })),
    deps.config,
    deps.now,
    async (tokens) =>
      deps.source.compose(
        dir,
        start,
        stack.map((s, i) => ({ ...s, repo: s.fork, token: tokens[i] ?? "" })),
        {
          message: `Start of ${taskKey}: ${stack.map((s) => s.taskKey).join(", ")} composed`,
          at: deps.now(),
          // The checkout is the base: its checks file names the files everyone appends to.
          appendOnly: appendOnlyMatcher(await checksFileInCheckout(dir)),
        },
      ),
  );
}

/** How often a running Agent checks whether its Change was cancelled, and takes the wakes sent to it. */
const CANCEL_POLL_MS = 1000;

/**
 * Aborts the run's signal once its Task is blocked as cancelled (cancelChange), so the command in
 * flight is killed with its children and the tool loop stops. Each tick also runs `onTick` (taking
 * the Agent's wakes); stop waits for a tick in flight, so nothing is taken after the run ends.
 */
function watchForCancel(
  deps: RunnerDeps,
  taskId: string,
  onTick: () => Promise<void>,
): { signal: AbortSignal; stop(): Promise<void> } {
  const controller = new AbortController();
  let ticking: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    void taskCancelled(deps.db, taskId)
      .then((cancelled) => {
        if (cancelled) controller.abort(new Error("cancelled"));
      })
      .catch(() => {});
    // A failed take leaves the wake queued for the next tick (or the runner).
    ticking = onTick().catch(() => {});
  }, CANCEL_POLL_MS);
  timer.unref();
  return {
    signal: controller.signal,
    stop: async () => {
      clearInterval(timer);
      await ticking;
    },
  };
}

type AgentReady =
  | { ok: true; installed: InstalledProgram | null; secrets: Record<string, string> }
  | { ok: false; result: RunResult };

/**
 * Before a command or program Agent's run takes a Sandbox: a program Agent's program must be
 * installed on this worker, and the tenant secrets the Agent is given (a program's key, a command's
 * `secrets`) set and readable. Anything missing blocks the Task with what to do (not a failure:
 * nothing was tried), and retrying the Task once it is fixed goes on.
 */
async function readyStep(
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
  await blockTaskForLimit(
    deps.db,
    { changeId: ctx.changeId, taskId: ctx.task.taskId, runId, limit: "agent_unavailable", cause: who, reason },
    deps,
  );
  return { ok: false, result: { outcome: "blocked", detail: reason } };
}

/** Another attempt that cannot run ends failed with the reason; its Task is not held back by it. */
async function failAttempt(deps: RunnerDeps, runId: string, ctx: RunContext, reason: string): Promise<RunResult> {
  await markRun(deps.db, runId, "failed", reason, deps.now());
  await finishAttempt(
    deps.db,
    {
      runId,
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
async function runProgramStep(
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
    runId,
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
async function secretsInFiles(
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
function outsideAllowed(agent: RunContext["agent"]): boolean {
  return agent?.kind === "command" || agent?.kind === "program" ? agent.allowOutsidePaths : true;
}
