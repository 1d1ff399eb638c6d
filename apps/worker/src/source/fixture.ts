import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import {
  COMMAND_CATALOGUE,
  type CommandEnvelope,
  canonicalRepo,
  DomainError,
  type FixtureFile,
  fixtureRecordIds,
  sourceKeys,
  workspaceFork,
} from "@rhumbatron/core";
import {
  changeSetExists,
  type FixtureRecord,
  type FixtureTask,
  loadFixtureTask,
  recordFixture,
  userIdentity,
  withRepoTokens,
} from "@rhumbatron/db";
import type { CommandHandler, EnqueueDeps } from "@rhumbatron/runtime";
import { storePatch } from "./code-store.ts";
import type { Identity } from "./git-objects.ts";
import type { SourceHandlerDeps } from "./handlers.ts";

/**
 * fixture.publish (integration queue; docs/agents.md, Publishing a fix by hand). `prepare` does the git
 * work with no transaction open, as an Agent run's publish does: fork canonical as the fixture's
 * `ws-<run>`, check out its main, stack the ChangeSets of the Tasks this one depends on, write and
 * delete the files, commit as the person who sent them, push to the fork, store the patch. `handle`
 * records the run, the ChangeSet (its ID derived from the command) and the completed Task in the
 * ack's transaction (recordFixture), so composition and verification follow as after an Agent.
 *
 * A redelivery is safe: a published ChangeSet ends it at once; a fork whose main is the commit this
 * command pushed (its message names the command) is reused; any other fork of this command is what
 * an attempt left before it pushed, and is made again from canonical.
 */
export type FixtureHandlerDeps = SourceHandlerDeps & Pick<EnqueueDeps, "log">;

type Prepared = { kind: "published" } | { kind: "record"; record: FixtureRecord };

const trailer = (commandId: string) => `Fixture: ${commandId}`;

export function fixtureHandler(deps: FixtureHandlerDeps): CommandHandler {
  return {
    commandTypes: ["fixture.publish"],
    async prepare({ command }): Promise<Prepared> {
      const p = COMMAND_CATALOGUE["fixture.publish"].payload.parse(command.payload);
      if (!command.taskId || !command.changeId)
        throw new DomainError("INVALID_INPUT", `${command.commandId}: fixture.publish needs its Task and Change`);
      const { runId, changeSetId } = fixtureRecordIds(command.commandId);
      if (await changeSetExists(deps.db, changeSetId)) return { kind: "published" };
      const task = await loadFixtureTask(deps.db, command.taskId);
      const fork = workspaceFork(runId);
      const base = {
        commandId: command.commandId,
        taskId: command.taskId,
        changeId: command.changeId,
        actorId: p.actorId,
        attempt: p.attempt,
        summary: p.summary,
        files: p.files,
        fork,
      };
      const git = await gitWork(deps, command, task, fork, p);
      if ("refused" in git) {
        const record = { ...base, baseCommit: git.start, commit: git.start, paths: [], patch: null };
        return { kind: "record", record: { ...record, refused: git.refused } };
      }
      const patch = git.patch
        ? await storePatch(
            deps.blobs,
            sourceKeys.changesetPatch(task.projectId, changeSetId),
            git.patch,
            deps.config.source.patchMaxBytes,
          )
        : null;
      return {
        kind: "record",
        record: {
          ...base,
          baseCommit: git.base,
          commit: git.commit,
          paths: git.paths,
          patch: patch ? { key: patch.key, bytes: patch.fullBytes, truncated: patch.truncated } : null,
        },
      };
    },
    async handle(ctx) {
      const p = ctx.prepared as Prepared;
      if (p.kind === "published") return "done";
      const r = await recordFixture(ctx, p.record, deps);
      deps.log?.({ commandId: ctx.command.commandId, taskId: p.record.taskId, note: r.note }, "fixture recorded");
      return r.result;
    },
  };
}

type GitResult = { base: string; commit: string; patch: string; paths: string[] } | { refused: string; start: string };

/** The fork, the commit and its diff, under one token bundle (canonical, the fork, the stacked forks). */
async function gitWork(
  deps: FixtureHandlerDeps,
  command: CommandEnvelope,
  task: FixtureTask,
  fork: string,
  p: { summary: string; files: FixtureFile[]; actorId: string },
): Promise<GitResult> {
  const canonical = canonicalRepo(task.projectId);
  const who = await authorOf(deps, p.actorId);
  return withRepoTokens(
    deps.db,
    [
      { repo: canonical, mode: "read", purpose: `fork ${fork}` },
      { repo: fork, mode: "write", purpose: `fixture ${command.commandId}` },
      ...task.stack.map((s) => ({ repo: s.fork, mode: "read" as const, purpose: "stack" })),
    ],
    deps.config,
    deps.now,
    async ([canonicalToken = "", forkToken = "", ...stackTokens]) => {
      let made = await pushedBefore(deps, fork, forkToken, command.commandId);
      if (!made) {
        await deps.source.fork(canonical, canonicalToken, fork);
        const dir = await mkdtemp(join(tmpdir(), "rhumbatron-fixture-"));
        try {
          const head = await deps.source.checkout(fork, forkToken, dir);
          const start = task.stack.length
            ? await deps.source.compose(
                dir,
                head,
                task.stack.map((s, i) => ({ ...s, repo: s.fork, token: stackTokens[i] ?? "" })),
                {
                  message: `Start of ${task.key}: ${task.stack.map((s) => s.taskKey).join(", ")} composed`,
                  at: deps.now(),
                },
              )
            : head;
          const refused = await writeFiles(dir, p.files);
          if (refused) return { refused, start };
          const message = `${task.key}: ${p.summary}\n\nA fix published by hand for "${task.title}".\n\n${trailer(command.commandId)}`;
          const commit = (await deps.source.commitAll(dir, message, who)) ?? start;
          await deps.source.push(dir, fork, forkToken);
          made = { base: start, commit };
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }
      const diff = await deps.source.diff(fork, forkToken, made.base, made.commit);
      return { ...made, patch: diff.patch, paths: diff.paths };
    },
  );
}

/**
 * The commit this command pushed to its fork before (an attempt that crashed after the push), or
 * null; a fork of this command without it is deleted, so the work starts again from canonical.
 */
async function pushedBefore(
  deps: FixtureHandlerDeps,
  fork: string,
  token: string,
  commandId: string,
): Promise<{ base: string; commit: string } | null> {
  if (!(await deps.source.exists(fork))) return null;
  const head = await deps.source.head(fork, token);
  const info = await deps.source.commitInfo(fork, token, head);
  const parent = info.parents[0];
  if (parent && info.message.trimEnd().endsWith(trailer(commandId))) return { base: parent, commit: head };
  await deps.source.delete(fork);
  return null;
}

/** The person who sent the fixture, as the commit's author. */
async function authorOf(deps: FixtureHandlerDeps, actorId: string): Promise<Identity> {
  return (await userIdentity(deps.db, actorId)) ?? { name: actorId, email: `${actorId}@users.rhumbatron.local` };
}

/**
 * Writes and deletes the files in the working copy. The paths were checked at the edge (relative,
 * never into .git); a path that resolves outside the copy is refused here all the same. A file
 * where a folder is (or under a file) is the sender's mistake, not a failure to retry: its reason
 * is returned and nothing is committed.
 */
async function writeFiles(dir: string, files: FixtureFile[]): Promise<string | null> {
  const root = resolve(dir);
  for (const f of files) {
    const target = resolve(root, f.path);
    if (!target.startsWith(root + sep) || target.startsWith(join(root, ".git") + sep))
      return `${f.path} is not a path inside the repository`;
    try {
      if ("content" in f) {
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, f.content, "utf8");
      } else await rm(target, { force: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EISDIR" || code === "ERR_FS_EISDIR" || code === "ENOTDIR" || code === "EEXIST")
        return `cannot write ${f.path}: a folder is there, or a file is where a folder of its path should be`;
      throw err;
    }
  }
  return null;
}
