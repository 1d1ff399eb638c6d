import { type BlobStore, DomainError, describeAgentChoice, type TranscriptStep } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { contextPacketOfRun } from "../reviews/packets.ts";
import { attemptedTask } from "../work-graph/attempts.ts";
import type { RunTranscript } from "../work-graph/runs.ts";

/** The Change, if it belongs to a project of this tenant; NOT_FOUND otherwise. */
async function changeOfTenant(db: Db, tenantId: string, changeId: string) {
  const change = await db.change.findFirst({
    where: { id: changeId, project: { tenantId } },
    select: { id: true, projectId: true },
  });
  if (!change) throw new DomainError("NOT_FOUND", `change ${changeId} not found`);
  return change;
}

/** The ChangeSets the Change's Agents published, oldest first, each with its Task's key (no patch text). */
export async function listChangeSets(db: Db, q: { tenantId: string; changeId: string }) {
  const change = await changeOfTenant(db, q.tenantId, q.changeId);
  const rows = await db.changeSet.findMany({ where: { changeId: change.id }, orderBy: { createdAt: "asc" } });
  const tasks = await db.task.findMany({ where: { changeId: change.id }, select: { id: true, key: true } });
  return rows.map((cs) => ({
    id: cs.id,
    taskId: cs.taskId,
    taskKey: tasks.find((t) => t.id === cs.taskId)?.key ?? null,
    runId: cs.runId,
    agentId: cs.agentId,
    fork: cs.fork,
    baseCommit: cs.baseCommit,
    commit: cs.commit,
    paths: cs.paths,
    /** Edits outside the Task's declared paths that the gate counts as a gap (empty when allowed or none). */
    outsidePaths: cs.outsidePaths,
    hasPatch: cs.patchRef !== null,
    patchBytes: cs.patchBytes,
    patchTruncated: cs.patchTruncated,
    createdAt: cs.createdAt,
  }));
}

/** The Candidates composed from this Change, newest first. */
export async function listChangeCandidates(db: Db, q: { tenantId: string; changeId: string }) {
  const change = await changeOfTenant(db, q.tenantId, q.changeId);
  return db.candidate.findMany({
    where: { changeId: change.id, projectId: change.projectId },
    orderBy: { createdAt: "desc" },
    select: {
      id: true,
      status: true,
      baseGeneration: true,
      promotedGeneration: true,
      approvalRequired: true,
      recomposedFrom: true,
      recomposeReason: true,
      rejectionReason: true,
      culprit: true,
      createdAt: true,
    },
  });
}

export interface StoredPatch {
  changeSetId: string;
  /** Null when the run published no patch or the blob is gone (for example after archive cleanup). */
  text: string | null;
  /** The stored patch stops at the configured size, at a line boundary; `fullBytes` is the diff's real size. */
  truncated: boolean;
  fullBytes: number;
}

/**
 * A ChangeSet's stored patch, read from the blob store: the Change page's code view shows the patch
 * stored when the ChangeSet was published (docs/how-it-works.md, step 4).
 * Only a key under the project's own `source/<project>/` prefix is read.
 */
export async function readChangeSetPatch(
  db: Db,
  blobs: BlobStore,
  q: { tenantId: string; changeSetId: string },
): Promise<StoredPatch> {
  const cs = await db.changeSet.findUnique({ where: { id: q.changeSetId } });
  const change = cs
    ? await db.change.findFirst({
        where: { id: cs.changeId, project: { tenantId: q.tenantId } },
        select: { projectId: true },
      })
    : null;
  if (!cs || !change) throw new DomainError("NOT_FOUND", `changeset ${q.changeSetId} not found`);
  const none = { changeSetId: cs.id, text: null, truncated: cs.patchTruncated, fullBytes: cs.patchBytes };
  if (!cs.patchRef) return none;
  if (!cs.patchRef.startsWith(`source/${change.projectId}/`)) {
    throw new DomainError("PRECONDITION_FAILED", `changeset ${cs.id} names a patch outside its project`);
  }
  const blob = await blobs.get(cs.patchRef);
  if (!blob) return none;
  return {
    changeSetId: cs.id,
    text: new TextDecoder().decode(blob.body),
    truncated: blob.metadata.truncated === "true" || cs.patchTruncated,
    fullBytes: Number(blob.metadata.fullSize ?? cs.patchBytes) || cs.patchBytes,
  };
}

/**
 * The Context Packet an Agent run was given (docs/agents.md, Context Packets): what it was pointed at, why
 * each file was picked, what did not fit the budget. `packet` is null for a run that has not picked
 * one yet (it is recorded before the model sees anything) or one from before packets were recorded.
 */
export async function readRunContextPacket(db: Db, q: { tenantId: string; runId: string }) {
  const run = await db.agentRun.findFirst({
    where: { id: q.runId, change: { project: { tenantId: q.tenantId } } },
    select: { id: true, changeId: true },
  });
  if (!run) throw new DomainError("NOT_FOUND", `agent run ${q.runId} not found`);
  return { runId: run.id, changeId: run.changeId, packet: await contextPacketOfRun(db, run.id) };
}

/** One Agent run of a Task with the transcript its program left (docs/agents.md, Choosing the Agent, "Transcripts"). */
export interface RunTranscriptView {
  runId: string;
  status: string;
  /** Why it failed or was blocked, in words. */
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** What the run reported: program, version, tokens, cost, hosts reached and refused; null for other Agents. */
  summary: RunTranscript | null;
  /** Its steps; null when it kept none (another kind of Agent, or a run blocked before it started). */
  steps: TranscriptStep[] | null;
}

/** A Task's Agent runs, newest first, each with its program's transcript when it has one. */
export async function readTaskTranscripts(
  db: Db,
  blobs: BlobStore,
  q: { tenantId: string; taskId: string },
): Promise<{ taskId: string; taskKey: string; changeId: string; runs: RunTranscriptView[] }> {
  const task = await db.task.findFirst({
    where: { id: q.taskId, change: { project: { tenantId: q.tenantId } } },
    select: { id: true, key: true, changeId: true, change: { select: { projectId: true } } },
  });
  if (!task) throw new DomainError("NOT_FOUND", `task ${q.taskId} not found`);
  const runs = await db.agentRun.findMany({
    where: { taskId: task.id, reason: "dispatch" },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: 20,
  });
  const views = await Promise.all(
    runs.map(async (r): Promise<RunTranscriptView> => {
      const summary = (r.transcript as RunTranscript | null) ?? null;
      let steps: TranscriptStep[] | null = null;
      // A key outside the project's own folder is never read.
      if (summary?.key?.startsWith(`agents/${task.change.projectId}/`)) {
        const blob = await blobs.get(summary.key);
        steps = blob ? (JSON.parse(new TextDecoder().decode(blob.body)) as TranscriptStep[]) : null;
      }
      return {
        runId: r.id,
        status: r.status,
        error: r.error,
        createdAt: r.createdAt,
        updatedAt: r.updatedAt,
        summary,
        steps,
      };
    }),
  );
  return { taskId: task.id, taskKey: task.key, changeId: task.changeId, runs: views };
}

/** One attempt of a Task with several, as the Change page compares them (work-graph/attempts.ts). */
export interface AttemptView {
  attempt: number;
  agent: string;
  run: { id: string; status: string; error: string | null; seconds: number | null } | null;
  changeSet: { id: string; paths: number; changedLines: number } | null;
  candidate: { id: string; status: string; passed: number; failed: number } | null;
  tokens: number | null;
  costUsd: number | null;
}

/**
 * The attempts of the Change's Task that asked for several, side by side: each one's Agent, its
 * newest run (status, time), ChangeSet (files, lines changed), newest Candidate (status, checks
 * passed and failed), tokens and cost where its program reported them; which one is picked and by
 * what rule. Null when no Task asked for attempts.
 */
export async function listAttempts(
  db: Db,
  q: { tenantId: string; changeId: string },
): Promise<{ taskKey: string; rule: string; picked: number | null; attempts: AttemptView[] } | null> {
  const change = await changeOfTenant(db, q.tenantId, q.changeId);
  const task = await attemptedTask({ tx: db }, change.id);
  if (!task) return null;
  const { pickedAttempt } = await db.change.findUniqueOrThrow({
    where: { id: change.id },
    select: { pickedAttempt: true },
  });
  const runs = await db.agentRun.findMany({
    where: { taskId: task.id, reason: { in: ["dispatch", "attempt"] } },
    orderBy: { createdAt: "desc" },
  });
  const sets = await db.changeSet.findMany({ where: { taskId: task.id }, orderBy: { createdAt: "desc" } });
  const candidates = await db.candidate.findMany({
    where: { changeId: change.id },
    orderBy: { createdAt: "desc" },
    include: { evidence: { select: { status: true, checkId: true, createdAt: true } } },
  });
  const attempts = task.attempts.agents.map((agent, i): AttemptView => {
    const n = i + 1;
    const run = runs.find((r) => r.alternative === n);
    const cs = sets.find((s) => s.alternative === n);
    const c = candidates.find((x) => x.alternative === n);
    // The latest record of each check counts once.
    const latest = new Map<string, string>();
    for (const e of [...(c?.evidence ?? [])].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime()))
      latest.set(e.checkId, e.status);
    const t = run?.transcript as RunTranscript | null | undefined;
    return {
      attempt: n,
      agent: describeAgentChoice(agent),
      run: run
        ? {
            id: run.id,
            status: run.status,
            error: run.error,
            seconds:
              run.status === "completed" || run.status === "failed"
                ? Math.round((run.updatedAt.getTime() - run.createdAt.getTime()) / 1000)
                : null,
          }
        : null,
      changeSet: cs ? { id: cs.id, paths: cs.paths.length, changedLines: cs.changedLines } : null,
      candidate: c
        ? {
            id: c.id,
            status: c.status,
            passed: [...latest.values()].filter((s) => s === "pass").length,
            failed: [...latest.values()].filter((s) => s === "fail" || s === "error").length,
          }
        : null,
      tokens: t ? t.inputTokens + t.outputTokens : null,
      costUsd: t?.costUsd ?? null,
    };
  });
  return { taskKey: task.key, rule: task.attempts.pick, picked: pickedAttempt, attempts };
}
