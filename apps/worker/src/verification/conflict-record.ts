import { type BlobStore, sourceKeys } from "@rhumbatron/core";
import { type VerificationInput, withRepoToken } from "@rhumbatron/db";
import type { ComposeConflict } from "../source/compose.ts";
import { CONFLICT_KIND } from "../source/conflict-text.ts";
import type { VerificationDeps } from "./verification-run.ts";

/**
 * A composition conflict kept for the Task that will repair it (docs/landing.md, Automatic repair):
 * for each conflicting file, the version the Task started from (the base), the one that landed
 * meanwhile (the Candidate's base) and the Task's own. Stored next to the Candidate's patch; the
 * re-run Agent's Context Packet carries it (repairNote).
 */
export interface RecordedConflict {
  taskKey: string;
  path: string;
  kind: ComposeConflict["kind"];
  base: string | null;
  landed: string | null;
  yours: string | null;
}

/** Each version is cut here: the Agent reads the whole file in its checkout; this shows where. */
const VERSION_MAX_CHARS = 4_000;

const cut = (text: string | null) =>
  text === null || text.length <= VERSION_MAX_CHARS ? text : `${text.slice(0, VERSION_MAX_CHARS)}\n… (cut)`;

/** The text of `path` at `commit` in `repo`, or null where the file does not exist there. */
async function fileAt(deps: VerificationDeps, repo: string, commit: string, path: string): Promise<string | null> {
  return withRepoToken(
    deps.db,
    { repo, mode: "read", purpose: `conflict ${path}` },
    deps.config,
    deps.now,
    async (t) => {
      const f = (await deps.source.files(repo, t, commit)).find((x) => x.path === path);
      return f ? new TextDecoder().decode(await deps.source.readBlob(repo, t, f.oid)) : null;
    },
  );
}

export async function recordConflict(
  deps: VerificationDeps,
  input: VerificationInput,
  fork: string,
  conflicts: ComposeConflict[],
): Promise<void> {
  const out: RecordedConflict[] = [];
  for (const c of conflicts) {
    const cs = input.changeSets.find((s) => s.id === c.changeSetId);
    if (!cs) continue;
    out.push({
      taskKey: c.taskKey,
      path: c.path,
      kind: c.kind,
      base: cut(await fileAt(deps, cs.fork, cs.baseCommit, c.path)),
      landed: cut(await fileAt(deps, fork, input.candidate.baseCommit, c.path)),
      yours: cut(await fileAt(deps, cs.fork, cs.commit, c.path)),
    });
  }
  const body = JSON.stringify({ generation: input.candidate.baseGeneration, conflicts: out });
  await deps.blobs.put(
    sourceKeys.candidateConflict(input.project.id, input.candidate.id),
    new TextEncoder().encode(body),
    {
      contentType: "application/json",
    },
  );
}

/**
 * What the re-run Agent is told about the conflict its Task's last ChangeSet ran into, or null when
 * none was kept for it: the files, and for each the base, what landed and its own version.
 */
export async function repairNote(
  blobs: BlobStore,
  q: { projectId: string; candidateId: string; taskKey: string },
): Promise<string | null> {
  const obj = await blobs.get(sourceKeys.candidateConflict(q.projectId, q.candidateId));
  if (!obj) return null;
  let kept: { generation: number; conflicts: RecordedConflict[] };
  try {
    kept = JSON.parse(new TextDecoder().decode(obj.body));
  } catch {
    return null;
  }
  if (!Array.isArray(kept?.conflicts)) return null;
  const mine = kept.conflicts.filter((c) => c.taskKey === q.taskKey);
  if (mine.length === 0) return null;
  const version = (label: string, text: string | null) => [`--- ${label} ---`, text ?? "(no such file)"];
  return [
    `This Task runs again because its last ChangeSet conflicted with what landed first (generation ${kept.generation}). Make the Task's edit again on this checkout, which holds what landed; keep what landed.`,
    ...mine.flatMap((c) => [
      "",
      `${c.path}: ${CONFLICT_KIND[c.kind]}`,
      ...version("base (what the Task started from)", c.base),
      ...version("landed (in this checkout now)", c.landed),
      ...version("the Task's own last version", c.yours),
    ]),
  ].join("\n");
}
