import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import {
  appendOnlyMatcher,
  type ComposableChangeSet,
  candidateFork,
  DomainError,
  dirForCandidate,
  type FileChangeKind,
  type SandboxWorkspace,
  sourceKeys,
} from "@rhumbatron/core";
import { type VerificationInput, withRepoToken, withRepoTokens } from "@rhumbatron/db";
import { storePatch } from "../source/code-store.ts";
import type { ComposeConflict } from "../source/compose.ts";
import { recordConflict } from "./conflict-record.ts";
import { checksFileInCheckout } from "./project-checks.ts";
import type { VerificationDeps } from "./verification-run.ts";

// The Candidate composed: its ChangeSets merged on the base in its own fork (the `merge` step).

/** What each ChangeSet does to each file, from its fork (the input of checkCompatibility). */
export async function composable(
  deps: VerificationDeps,
  sets: VerificationInput["changeSets"],
): Promise<ComposableChangeSet[]> {
  const out: ComposableChangeSet[] = [];
  for (const cs of sets) {
    const files = await withRepoToken(
      deps.db,
      { repo: cs.fork, mode: "read", purpose: `compatibility ${cs.id}` },
      deps.config,
      deps.now,
      async (token) => {
        const before = new Map((await deps.source.files(cs.fork, token, cs.baseCommit)).map((f) => [f.path, f.oid]));
        const after = new Map((await deps.source.files(cs.fork, token, cs.commit)).map((f) => [f.path, f.oid]));
        const changed: { path: string; kind: FileChangeKind }[] = [];
        for (const [path, oid] of after) {
          if (!before.has(path)) changed.push({ path, kind: "add" });
          else if (before.get(path) !== oid) changed.push({ path, kind: "modify" });
        }
        for (const path of before.keys()) if (!after.has(path)) changed.push({ path, kind: "delete" });
        return changed;
      },
    );
    const builtOn = sets.filter((o) => cs.upstreamTasks.includes(o.taskKey)).map((o) => o.id);
    out.push({ id: cs.id, files, builtOn });
  }
  return out;
}

export type Merged =
  | { ok: true; commit: string; tree: string; paths: string[] }
  /** `tasks`: the Tasks whose ChangeSets could not apply (absent in a step recorded before it was kept). */
  | { ok: false; reason: string; paths: string[]; lines: string[]; tasks?: string[] };

/**
 * Checks out the base in the Candidate's run directory, merges each ChangeSet's commit in Work
 * Graph order, pushes the result to cand-<id> (fast-forward from the base) and stores the
 * Candidate-vs-base patch.
 */
export async function merge(
  deps: VerificationDeps,
  input: VerificationInput,
  ws: SandboxWorkspace,
  fork: string,
): Promise<Merged> {
  const { candidate, project } = input;
  await rm(ws.path, { recursive: true, force: true });
  const dir = (await deps.sandbox.open({ projectId: project.id, dirName: dirForCandidate(candidate.id) })).path;
  const token = (repo: string, mode: "read" | "write", purpose: string) => ({ repo, mode, purpose });
  await withRepoToken(deps.db, token(fork, "read", "checkout"), deps.config, deps.now, (t) =>
    deps.source.checkout(fork, t, dir, candidate.baseCommit),
  );
  // The files everyone appends to, from the base's checks file (never the Candidate's own).
  const appendOnly = appendOnlyMatcher(deps.projectChecks?.file ?? (await checksFileInCheckout(dir)));
  let commit: string;
  try {
    commit = await composeAll(deps, dir, input, appendOnly);
  } catch (err) {
    if (err instanceof DomainError && err.code === "CONFLICT") {
      // Both sides and the base of each file, for the Task that repairs it (conflict-record.ts).
      const conflicts = err.details?.conflicts as ComposeConflict[] | undefined;
      if (conflicts?.length) await recordConflict(deps, input, fork, conflicts);
      return {
        ok: false,
        reason: err.message,
        paths: (err.details?.paths as string[] | undefined) ?? [],
        lines: (err.details?.lines as string[] | undefined) ?? [err.message],
        tasks: [
          ...new Set(((err.details?.conflicts as { taskKey: string }[] | undefined) ?? []).map((c) => c.taskKey)),
        ],
      };
    }
    throw err;
  }
  await withRepoToken(deps.db, token(fork, "write", "push"), deps.config, deps.now, (t) =>
    deps.source.push(dir, fork, t),
  );
  // The checks see the submodules an import fetched, as a recursive clone has them.
  await deps.source.materializeSubmodules(dir);
  return withRepoToken(deps.db, token(fork, "read", "composed"), deps.config, deps.now, async (t) => {
    const tree = await deps.source.treeOf(fork, t, commit);
    const diff = await deps.source.diff(fork, t, candidate.baseCommit, commit);
    // Stored even when empty, so the page can say the Candidate changes nothing instead of "not stored".
    await storePatch(
      deps.blobs,
      sourceKeys.candidatePatch(project.id, candidate.id),
      diff.patch,
      deps.config.source.patchMaxBytes,
    );
    return { ok: true as const, commit, tree, paths: diff.paths };
  });
}

/**
 * The Candidate's composition: every ChangeSet's own diff replayed on the base in Work Graph order
 * (docs/composition.md). Its time is the Candidate's creation, so the same Candidate always gets the
 * same commit.
 */
async function composeAll(
  deps: VerificationDeps,
  dir: string,
  input: VerificationInput,
  appendOnly: (path: string) => boolean,
): Promise<string> {
  const sets = input.changeSets;
  if (sets.length === 0) throw new DomainError("PRECONDITION_FAILED", "the Candidate has no ChangeSets to compose");
  return withRepoTokens(
    deps.db,
    sets.map((cs) => ({ repo: cs.fork, mode: "read" as const, purpose: `compose ${cs.id}` })),
    deps.config,
    deps.now,
    (tokens) =>
      deps.source.compose(
        dir,
        input.candidate.baseCommit,
        sets.map((cs, i) => ({
          repo: cs.fork,
          token: tokens[i] ?? "",
          changeSetId: cs.id,
          taskKey: cs.taskKey,
          baseCommit: cs.baseCommit,
          commit: cs.commit,
        })),
        {
          // The Change's title, then trailers; the generation is the one promotion's compare-and-swap gives it.
          message: `${input.change.title}\n\n${sets.length} ChangeSet(s) composed on S${input.candidate.baseGeneration}.\n\nChange: ${input.change.id}\nCandidate: ${input.candidate.id}\nGeneration: ${input.candidate.baseGeneration + 1}\n`,
          at: input.candidate.createdAt,
          appendOnly,
        },
      ),
  );
}

/**
 * The first `k` ChangeSets composed on the Candidate's base in `dir`, as merge composes all of them
 * (same message and time), for a culprit probe (culprit.ts): checked out from the Candidate's fork,
 * which holds the base, and pushed nowhere.
 */
export async function composePrefix(deps: VerificationDeps, input: VerificationInput, dir: string, k: number) {
  const fork = candidateFork(input.candidate.id);
  await withRepoToken(deps.db, { repo: fork, mode: "read", purpose: "culprit probe" }, deps.config, deps.now, (t) =>
    deps.source.checkout(fork, t, dir, input.candidate.baseCommit),
  );
  const appendOnly = appendOnlyMatcher(deps.projectChecks?.file ?? (await checksFileInCheckout(dir)));
  // Prefix 0 is the base as it is.
  const commit =
    k > 0
      ? await composeAll(deps, dir, { ...input, changeSets: input.changeSets.slice(0, k) }, appendOnly)
      : input.candidate.baseCommit;
  await deps.source.materializeSubmodules(dir);
  return commit;
}

/** After a restart the run directory may be gone: check the composed commit out again. */
export async function ensureWorkingCopy(deps: VerificationDeps, ws: SandboxWorkspace, fork: string, commit: string) {
  if (existsSync(join(ws.path, ".git", "HEAD"))) return;
  await withRepoToken(deps.db, { repo: fork, mode: "read", purpose: "restore" }, deps.config, deps.now, (t) =>
    deps.source.checkout(fork, t, ws.path, commit),
  );
  await deps.source.materializeSubmodules(ws.path);
}
