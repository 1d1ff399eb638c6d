import { appendOnlyMatcher, pathsOutside, sourceKeys, workspaceFork } from "@rhumbatron/core";
import { publishChangeSet, runStillHeld, runSuperseded, withRepoTokens } from "@rhumbatron/db";
import { storePatch } from "../source/code-store.ts";
import { checksFileInCheckout } from "../verification/project-checks.ts";
import { outsideAllowed, secretsInFiles } from "./run-ready.ts";
import type { RunContext, RunnerDeps } from "./run-types.ts";

// Step `publish` of an Agent run (runner.ts): the commit, its checks, the push and the ChangeSet.

/** The folder of the project's checks file (core checks-file.ts): what a command Agent may not edit. */
const GATE_FOLDER = ".rhumbatron";

/**
 * Step `publish`: commit the Agent's work, push it to the fork and read its diff (one token
 * bundle), store the patch, publish the ChangeSet. Returns the ChangeSet's ID, or null when the
 * diff is refused (a command Agent's edit of the checks file): nothing is published then.
 */
export async function publishStep(
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
  // A runner whose run was taken over pushes nothing to the run's fork, where the taker works now.
  const held = { runId, epoch: ctx.epoch };
  if (!(await runStillHeld(deps.db, held))) throw runSuperseded(held);
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
      epoch: ctx.epoch,
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

export async function composeDependencies(
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
