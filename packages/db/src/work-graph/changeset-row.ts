import type { Tx } from "../transaction.ts";

/** What a published ChangeSet records, whoever made it (an Agent's run or a person's fixture). */
export interface ChangeSetRow {
  id: string;
  changeId: string;
  taskId: string;
  runId: string;
  agentId: string;
  fork: string;
  baseCommit: string;
  commit: string;
  paths: string[];
  /** Edits outside the Task's declared paths that count as a gate gap (core pathsOutside). */
  outsidePaths?: string[];
  patch: { key: string; bytes: number; truncated: boolean } | null;
  /** Which attempt of its Task made it (docs/attempts.md); 1 unless a Task asked for several. */
  alternative?: number;
  /** Lines added plus lines removed. */
  changedLines?: number;
}

/** The ChangeSet's row; its Events are the caller's (they differ between an Agent and a fixture). */
export async function insertChangeSet(tx: Tx, r: ChangeSetRow): Promise<void> {
  await tx.changeSet.create({
    data: {
      id: r.id,
      changeId: r.changeId,
      taskId: r.taskId,
      runId: r.runId,
      agentId: r.agentId,
      fork: r.fork,
      baseCommit: r.baseCommit,
      commit: r.commit,
      paths: r.paths,
      outsidePaths: r.outsidePaths ?? [],
      patchRef: r.patch?.key ?? null,
      patchBytes: r.patch?.bytes ?? 0,
      patchTruncated: r.patch?.truncated ?? false,
      alternative: r.alternative ?? 1,
      changedLines: r.changedLines ?? 0,
    },
  });
}
