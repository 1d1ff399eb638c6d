import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { canonicalRepo, DomainError, dirForAgentRun, sourceKeys, workspaceFork } from "@rhumbatron/core";
import {
  admitSandbox,
  blockTaskForLimit,
  finishTask,
  issueRepoToken,
  loadRunContext,
  markRun,
  openReservation,
  publishChangeSet,
  recordRunStart,
  releaseSandboxAdmission,
  reserveSandboxSeconds,
  revokeRepoToken,
  type SandboxReservation,
  settleSandbox,
  withRepoToken,
} from "@rhumbatron/db";
import type { WorkerContext } from "../context.ts";
import { storePatch } from "../source/code-store.ts";
import { workspaceTools } from "./toolbox.ts";

/**
 * One Agent run, end to end (spec: Sandbox lifecycle sequence): admit, reserve, fork canonical as
 * ws-<run>, check out the base and stack the ChangeSets this Task depends on, run the tool loop,
 * commit, push with a write token, revoke, publish the ChangeSet with its stored patch, settle the
 * meter, remove the run directory, complete the Task.
 */
export type RunnerDeps = Pick<
  WorkerContext,
  "db" | "config" | "nudger" | "now" | "source" | "sandbox" | "blobs" | "provider" | "allowlist"
> & {
  /** Test hook: called after the agent's tool loop, before the publish. */
  afterTools?: (workspacePath: string) => Promise<void>;
};

export type RunResult = {
  outcome: "completed" | "failed" | "blocked" | "skipped";
  detail: string;
  changeSetId?: string;
};

const RUN_MARKER = "rhumbatron-run";

export async function executeRun(deps: RunnerDeps, runId: string): Promise<RunResult> {
  const ctx = await loadRunContext(deps.db, runId);
  const { task } = ctx;
  const who = { name: ctx.agentId, email: `${ctx.agentId}@agents.rhumbatron.local` };
  if (ctx.reason !== "dispatch") {
    // A resume wake: the scripted agent has nothing to re-plan; record that it was seen.
    await markRun(deps.db, runId, "completed", null, deps.now());
    return { outcome: "skipped", detail: `wake ${ctx.reason} noted` };
  }
  if (ctx.taskState !== "running") {
    await markRun(deps.db, runId, "failed", `task is ${ctx.taskState}`, deps.now());
    return { outcome: "skipped", detail: `task is ${ctx.taskState}` };
  }

  let reservation: SandboxReservation;
  const admission = { changeId: ctx.changeId, projectId: ctx.projectId };
  // One reservation per run: a run picked up again after its runner crashed reuses the open one
  // (and its admitted workspace) instead of counting the same run twice.
  const reservationId = `sbxres_${runId}`;
  try {
    const held = await openReservation(deps.db, reservationId, { kind: "agent", changeId: ctx.changeId }, deps.config);
    if (held) reservation = held;
    else {
      await admitSandbox(deps.db, admission, deps.config);
      try {
        reservation = await reserveSandboxSeconds(
          deps.db,
          { kind: "agent", changeId: ctx.changeId, id: reservationId },
          deps.config,
          deps.now(),
        );
      } catch (err) {
        await releaseSandboxAdmission(deps.db, admission);
        throw err;
      }
    }
  } catch (err) {
    if (err instanceof DomainError && err.code === "PRECONDITION_FAILED") {
      await blockTaskForLimit(
        deps.db,
        {
          changeId: ctx.changeId,
          taskId: task.taskId,
          runId,
          limit: "sandbox_meter",
          cause: typeof err.details?.limit === "string" ? err.details.limit : null,
          reason: err.message,
        },
        deps,
      );
      return { outcome: "blocked", detail: err.message };
    }
    throw err;
  }

  const started = deps.now();
  const canonical = canonicalRepo(ctx.projectId);
  const fork = workspaceFork(runId);
  const ws = await deps.sandbox.open({ projectId: ctx.projectId, dirName: dirForAgentRun(runId) });
  const cancel = watchForCancel(deps, task.taskId);
  const finish = async (outcome: "completed" | "failed", detail: string, changeSetId?: string): Promise<RunResult> => {
    cancel.stop();
    await settleSandbox(
      deps.db,
      reservation,
      { wallSeconds: Math.ceil((deps.now().getTime() - started.getTime()) / 1000), billing: deps.sandbox.billing },
      deps.config,
    );
    await ws.remove().catch(() => {});
    if (cancel.signal.aborted) {
      // The Change was cancelled under the run: its Task is blocked already; nothing is published.
      await markRun(deps.db, runId, "cancelled", "the Change was cancelled", deps.now());
      return { outcome: "skipped", detail: "cancelled: the Change was cancelled while the Agent worked" };
    }
    await markRun(deps.db, runId, outcome, outcome === "failed" ? detail : null, deps.now());
    await finishTask(
      deps.db,
      { taskId: task.taskId, runId, agentId: ctx.agentId, outcome, changeSetId: changeSetId ?? null, reason: detail },
      deps,
    );
    return { outcome, detail, ...(changeSetId ? { changeSetId } : {}) };
  };

  try {
    // Fork on first write, then a working copy of it at the base (or at the recorded start after a loss).
    const base = await withRepoToken(
      deps.db,
      { repo: canonical, mode: "read", purpose: `fork ${fork}` },
      deps.config,
      deps.now,
      async (token) => {
        // The head first, then the copy: main only moves forward, so the fork holds that commit even
        // when a promotion fast-forwards canonical in between (read after the copy, it may not).
        const head = await deps.source.head(canonical, token);
        await deps.source.fork(canonical, token, fork);
        return head;
      },
    );
    const start = ctx.startCommit ?? base;
    await withRepoToken(
      deps.db,
      { repo: fork, mode: "read", purpose: `checkout ${runId}` },
      deps.config,
      deps.now,
      (token) => deps.source.checkout(fork, token, ws.path, start),
    );
    const stacked = await composeDependencies(deps, ctx.stack, ws.path, start, task.key);
    await recordRunStart(deps.db, runId, fork, start, deps.now());
    await writeFile(join(ws.path, ".git", RUN_MARKER), `${runId} ${start}\n`);

    // The project's own allowlist when it has one (spec: run_command allowlist, configurable per project).
    const allowlist = ctx.commandAllowlist.length ? ctx.commandAllowlist : deps.allowlist;
    const tools = workspaceTools(ws, {
      allowlist,
      commandTimeoutMs: deps.config.sandbox.commandTimeoutSeconds * 1000,
      signal: cancel.signal,
    });
    const outcome = await deps.provider.run(task, tools, cancel.signal);
    if (cancel.signal.aborted) return await finish("failed", "cancelled");
    await deps.afterTools?.(ws.path);
    if (outcome.status === "failed") return await finish("failed", outcome.summary);

    // A lost Sandbox loses uncommitted edits: publishing now would publish partial work.
    const marker = join(ws.path, ".git", RUN_MARKER);
    if (!existsSync(marker) || !(await readFile(marker, "utf8")).startsWith(runId)) {
      return await finish(
        "failed",
        "the Sandbox was lost before the work was committed; uncommitted edits are gone, so nothing was published",
      );
    }
    const commit = (await deps.source.commitAll(ws.path, `${task.key}: ${task.title}\n\nRun ${runId}`, who)) ?? stacked;
    await withRepoToken(
      deps.db,
      { repo: fork, mode: "write", purpose: `push ${runId}` },
      deps.config,
      deps.now,
      (token) => deps.source.push(ws.path, fork, token),
    );
    const diff = await withRepoToken(
      deps.db,
      { repo: fork, mode: "read", purpose: `diff ${runId}` },
      deps.config,
      deps.now,
      (token) => deps.source.diff(fork, token, stacked, commit),
    );
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
        baseCommit: stacked,
        commit,
        paths: diff.paths,
        changeSetId,
        patch: patch ? { key: patch.key, bytes: patch.fullBytes, truncated: patch.truncated } : null,
      },
      deps,
    );
    return await finish("completed", outcome.summary, changeSetId);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return finish("failed", `the run failed: ${message}`);
  }
}

/**
 * A Task with dependencies starts from their composition: their ChangeSets (the whole chain, in Work
 * Graph order) composed onto the base, as the Candidate will compose them. Returns that commit.
 */
async function composeDependencies(
  deps: RunnerDeps,
  stack: { changeSetId: string; taskKey: string; fork: string; baseCommit: string; commit: string }[],
  dir: string,
  start: string,
  taskKey: string,
): Promise<string> {
  if (stack.length === 0) return start;
  const tokens = await Promise.all(
    stack.map(async (s) => ({
      ...s,
      issued: await issueRepoToken(deps.db, { repo: s.fork, mode: "read", purpose: "stack" }, deps.config, deps.now()),
    })),
  );
  try {
    return await deps.source.compose(
      dir,
      start,
      tokens.map((s) => ({ ...s, repo: s.fork, token: s.issued.token })),
      { message: `Start of ${taskKey}: ${stack.map((s) => s.taskKey).join(", ")} composed`, at: deps.now() },
    );
  } finally {
    for (const s of tokens) await revokeRepoToken(deps.db, s.issued.token, deps.now());
  }
}

/** How often a running Agent checks whether its Change was cancelled. */
const CANCEL_POLL_MS = 1000;

/**
 * Aborts the run's signal once its Task is blocked as cancelled (cancelChange), so the command in
 * flight is killed with its children and the tool loop stops.
 */
function watchForCancel(deps: RunnerDeps, taskId: string): { signal: AbortSignal; stop(): void } {
  const controller = new AbortController();
  const timer = setInterval(() => {
    void deps.db.task
      .findUnique({ where: { id: taskId }, select: { state: true, blockedLimit: true } })
      .then((t) => {
        if (t?.state === "blocked" && t.blockedLimit === "cancelled") controller.abort(new Error("cancelled"));
      })
      .catch(() => {});
  }, CANCEL_POLL_MS);
  timer.unref();
  return { signal: controller.signal, stop: () => clearInterval(timer) };
}
