import {
  type BlobStore,
  buildAgentPacket,
  type ContextPacket,
  canonicalRepo,
  type FileIndex,
  fileIndexSchema,
  type PacketTask,
  sourceKeys,
} from "@rhumbatron/core";
import { conflictedCandidateOf, culpritNoteFor, recordContextPacket, withRepoToken } from "@rhumbatron/db";
import type { WorkerContext } from "../context.ts";
import { publishCodeStore } from "../source/code-store.ts";
import { repairNote } from "../verification/conflict-record.ts";

/**
 * An Agent run's Context Packet (docs/agents.md, Context Packets). The run reads the file index of its base
 * tree, source/<project>/<tree>/index.json, instead of walking the repository: the packet is picked
 * from it, and the toolbox's list_files answers from it. When the index of that tree is missing
 * (a crash between a promotion's fast-forward and its code store, or a store emptied by hand), the
 * run publishes the tree's code store first, as provisioning and the source sync do (idempotent),
 * and the packet records that it was built and why. The packet is recorded before the tool loop
 * and a run picked up again gets the one recorded first.
 */
export type ContextDeps = Pick<WorkerContext, "db" | "config" | "now" | "source" | "blobs">;

export const agentPacketId = (runId: string) => `ctxp_${runId.slice(4)}`;

/** The index of one tree as stored, or null when there is none (or it does not read as an index). */
export async function readFileIndex(blobs: BlobStore, projectId: string, tree: string): Promise<FileIndex | null> {
  const obj = await blobs.get(sourceKeys.index(projectId, tree));
  if (!obj) return null;
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(obj.body));
  } catch {
    return null;
  }
  const parsed = fileIndexSchema.safeParse(json);
  return parsed.success && parsed.data.tree === tree ? parsed.data : null;
}

/** The base tree's index, building the code store of `base` first when the index is missing. */
async function indexOfBase(deps: ContextDeps, projectId: string, base: string) {
  const repo = canonicalRepo(projectId);
  return withRepoToken(deps.db, { repo, mode: "read", purpose: "file index" }, deps.config, deps.now, async (token) => {
    const tree = await deps.source.treeOf(repo, token, base);
    const stored = await readFileIndex(deps.blobs, projectId, tree);
    if (stored) return { index: stored, source: "stored" as const, note: null };
    await publishCodeStore({
      store: deps.source,
      blobs: deps.blobs,
      config: deps.config,
      projectId,
      repo,
      token,
      commit: base,
    });
    const built = await readFileIndex(deps.blobs, projectId, tree);
    if (!built) throw new Error(`the file index of tree ${tree} could not be built`);
    const note = `index.json of tree ${tree} was missing or unreadable; the run built it from ${base.slice(0, 12)}`;
    return { index: built, source: "built" as const, note };
  });
}

/**
 * Builds and records the run's packet. Returns the recorded packet (what the model is told) and the
 * paths of the index (what list_files starts from).
 */
export async function agentRunContext(
  deps: ContextDeps,
  run: {
    runId: string;
    projectId: string;
    base: string;
    task: PacketTask;
    repair?: { changeId: string; taskKey: string };
  },
): Promise<{ packet: ContextPacket; indexPaths: string[] }> {
  const { index, source, note } = await indexOfBase(deps, run.projectId, run.base);
  // A re-run after its Task's ChangeSet conflicted is told the conflict: both sides and the base.
  const conflicted = run.repair ? await conflictedCandidateOf(deps.db, run.repair.changeId) : null;
  const repair =
    conflicted && run.repair
      ? await repairNote(deps.blobs, { projectId: run.projectId, candidateId: conflicted, taskKey: run.repair.taskKey })
      : null;
  // A re-run of the Task whose ChangeSet broke a check of the Change (verification/culprit.ts) is told the failure.
  const culprit = run.repair ? await culpritNoteFor(deps.db, run.repair.changeId, run.repair.taskKey) : null;
  const notes = [note, repair, culprit].filter((n): n is string => n !== null);
  const built = buildAgentPacket(agentPacketId(run.runId), index, run.task, {
    indexSource: source,
    note: notes.length ? notes.join("\n\n") : null,
  });
  const packet = await recordContextPacket(deps.db, { ...built, projectId: run.projectId, runId: run.runId });
  return { packet, indexPaths: index.files.map((f) => f.path) };
}
