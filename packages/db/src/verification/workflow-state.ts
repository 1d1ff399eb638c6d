import {
  type buildEvent,
  CANDIDATE_STATUS_SETS,
  type Culprit,
  candidateStatusesInto,
  DomainError,
  type EventPayload,
  type EventType,
  type EvidenceRecord,
  type GateResult,
  type VerificationPlan,
} from "@rhumbatron/core";
import { appendToOutbox, type StateDeps } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { domainWrite } from "../events/domain-write.ts";
import { changeEvent } from "../events/factory.ts";
import { type LockedChange, lockResourceRow } from "../events/owners.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { moveCandidates, moveChanges } from "../statuses/moves.ts";
import type { TxContext } from "../transaction.ts";
import { pickByRule } from "../work-graph/attempts.ts";
import { waitOnStack } from "../work-graph/stack.ts";
import { failingTestsOf, type RecordedTest, recordTestHistory, type TestHistoryDeps } from "./history.ts";
import { earlierApproval } from "./interdiff.ts";

/**
 * The Candidate's state changes during verification. Each one locks the Change (the Candidate's
 * resource shard), moves the status only from the states it may leave, and writes its Event with
 * a stable ID in the same transaction, so a replayed step writes nothing twice.
 */
const IN_PROGRESS = CANDIDATE_STATUS_SETS.inProgress;
/** Where the composition step may record its tree from: the table's moves into verifying that are
 * still in progress, and verifying itself (a retried step writes the same composition again). */
const INTO_VERIFYING: string[] = [
  ...candidateStatusesInto("verifying").filter((s) => (IN_PROGRESS as readonly string[]).includes(s)),
  "verifying",
];

export async function loadVerificationInput(db: Db, candidateId: string) {
  const candidate = await db.candidate.findUnique({ where: { id: candidateId } });
  if (!candidate) return null;
  const [change, project, sets, tasks] = await Promise.all([
    db.change.findUniqueOrThrow({ where: { id: candidate.changeId } }),
    db.project.findUniqueOrThrow({ where: { id: candidate.projectId } }),
    db.changeSet.findMany({ where: { id: { in: candidate.changeSetIds } } }),
    db.task.findMany({
      where: { changeId: candidate.changeId },
      select: { id: true, key: true, dependencies: true },
    }),
  ]);
  const keyOf = new Map(tasks.map((t) => [t.id, t.key]));
  const depsOf = new Map(tasks.map((t) => [t.key, t.dependencies]));
  const upstream = (key: string, seen = new Set<string>()): Set<string> => {
    for (const d of depsOf.get(key) ?? []) if (!seen.has(d)) upstream(d, seen.add(d));
    return seen;
  };
  // In composition order, each with the key of the Task that made it (conflicts name Tasks).
  const changeSets = candidate.changeSetIds.flatMap((id) =>
    sets
      .filter((s) => s.id === id)
      .map((s) => {
        const taskKey = keyOf.get(s.taskId) ?? s.taskId;
        return { ...s, taskKey, upstreamTasks: [...upstream(taskKey)] };
      }),
  );
  return { candidate, change, project, changeSets };
}
export type VerificationInput = NonNullable<Awaited<ReturnType<typeof loadVerificationInput>>>;

/** A Candidate's Event on its Change, written by the verification workflow. */
function candidateEvent<T extends EventType>(
  owner: LockedChange,
  type: T,
  key: string,
  payload: EventPayload<T>,
  now: Date,
) {
  return changeEvent(owner, type, { key, actor: { kind: "system", id: "verification" }, payload, now });
}

/** Merged: status verifying, the plan and the composed commit recorded, candidate.composed written. */
export async function markCandidateComposed(
  ctx: TxContext,
  c: {
    candidateId: string;
    changeId: string;
    commit: string;
    tree: string;
    plan: VerificationPlan;
    approvalRequired: boolean;
  },
  deps: StateDeps,
): Promise<boolean> {
  // The owner's fields for the Event (a Change's tenant and project never change), then one
  // statement (domainWrite): the Change's lock, an open Candidate to verifying, candidate.composed.
  const change = await ctx.tx.change.findUnique({
    where: { id: c.changeId },
    select: { projectId: true, project: { select: { tenantId: true, canonicalGeneration: true } } },
  });
  if (!change) throw new DomainError("NOT_FOUND", `change:${c.changeId} not found`);
  const owner: LockedChange = {
    id: c.changeId,
    projectId: change.projectId,
    tenantId: change.project.tenantId,
    canonicalGeneration: change.project.canonicalGeneration,
  };
  const moved = await domainWrite(
    ctx,
    {
      table: "candidates",
      id: c.candidateId,
      changeId: c.changeId,
      projectId: owner.projectId,
      expect: { status: INTO_VERIFYING },
      set: {
        status: "verifying",
        composed_commit: c.commit,
        composed_tree: c.tree,
        plan: c.plan,
        approval_required: c.approvalRequired,
      },
      events: [
        candidateEvent(
          owner,
          "candidate.composed",
          c.candidateId,
          { candidateId: c.candidateId, treeHash: c.tree },
          deps.now(),
        ),
      ],
    },
    deps,
  );
  return moved.applied;
}

export type NewEvidence = Omit<EvidenceRecord, "completedAt"> & {
  kind: string;
  detail: string;
  attachments?: string[];
  /** The command that ran, and the end of its output when it did not pass. */
  command?: string | null;
  outputTail?: string | null;
  /** Each test's outcome from the check's report (reports.ts), failing first; null: no report. */
  tests?: unknown[] | null;
  /** A culprit probe's record: its tests ran on a prefix of the ChangeSets, so they join no test's history. */
  probe?: boolean;
  /** The check's inputs key, and the Evidence it reuses (docs/checks-file.md, Reused Evidence); null when neither. */
  inputsKey?: string | null;
  reusedFrom?: string | null;
  completedAt: Date;
};

/** One Evidence row and its evidence.recorded Event; a replay with the same ID writes nothing. */
export async function recordEvidence(
  ctx: TxContext,
  c: { candidateId: string; changeId: string },
  e: NewEvidence,
  deps: TestHistoryDeps,
): Promise<void> {
  const owner = await lockResourceRow(ctx, `change:${c.changeId}`);
  const inserted = await ctx.tx.evidence.createMany({
    data: [
      {
        id: e.id,
        candidateId: c.candidateId,
        checkId: e.checkId,
        kind: e.kind,
        status: e.status,
        coverage: e.coverage,
        durationMs: Math.round(e.durationMs),
        timeoutSeconds: e.timeoutSeconds,
        metrics: e.metrics,
        outputKey: e.outputKey,
        command: e.command ?? null,
        outputTail: e.outputTail ?? null,
        // One line each: the excerpt's lines never hold a newline (failure-excerpt.ts).
        outputExcerpt: e.excerpt?.length ? e.excerpt.join("\n") : null,
        ...(e.tests ? { tests: e.tests as object[] } : {}),
        attachments: e.attachments ?? [],
        detail: e.detail.slice(0, 4000),
        inputsKey: e.inputsKey ?? null,
        reusedFrom: e.reusedFrom ?? null,
        completedAt: e.completedAt,
      },
    ],
    skipDuplicates: true,
  });
  if (inserted.count === 0) return;
  await appendToOutbox(
    ctx,
    [
      candidateEvent(
        owner,
        "evidence.recorded",
        e.id,
        { candidateId: c.candidateId, checkId: e.checkId, status: e.status, coverage: e.coverage },
        deps.now(),
      ),
    ],
    deps,
  );
  // The tests it ran join their history; a reused record ran nothing.
  if (e.tests?.length && !e.reusedFrom && !e.probe) {
    await recordTestHistory(
      ctx,
      owner,
      { id: e.id, checkId: e.checkId, candidateId: c.candidateId, tests: e.tests as RecordedTest[] },
      deps,
    );
  }
}

export async function evidenceOf(db: Db | TxContext["tx"], candidateId: string): Promise<EvidenceRecord[]> {
  const rows = await db.evidence.findMany({ where: { candidateId }, orderBy: [{ completedAt: "asc" }, { id: "asc" }] });
  return rows.map((r) => ({
    id: r.id,
    checkId: r.checkId,
    status: r.status as EvidenceRecord["status"],
    coverage: r.coverage as EvidenceRecord["coverage"],
    durationMs: r.durationMs,
    timeoutSeconds: r.timeoutSeconds,
    completedAt: r.completedAt,
    metrics: r.metrics as Record<string, number>,
    outputKey: r.outputKey,
    detail: r.detail,
    excerpt: r.outputExcerpt === null ? null : r.outputExcerpt.split("\n"),
    reusedFrom: r.reusedFrom,
    failingTests: failingTestsOf(r.tests),
  }));
}

/** A recorded pass that a check with these inputs may reuse (docs/checks-file.md, Reused Evidence), or null. */
export interface ReusableEvidence {
  id: string;
  candidateId: string;
  checkId: string;
  kind: string;
  status: "pass";
  coverage: "checked_supported";
  durationMs: number;
  timeoutSeconds: number;
  metrics: Record<string, number>;
  outputKey: string | null;
  command: string | null;
  tests: unknown[] | null;
  attachments: string[];
  detail: string;
}

/**
 * The earliest pass with full coverage recorded with this inputs key by another Candidate of the
 * same project. Never a fail, an error, a skip or a pass without signal (a failure always reruns,
 * so a flaky one can clear), never another project's, never a record that itself reuses one (the
 * original run is the one named).
 */
export async function reusableEvidence(
  db: Db | TxContext["tx"],
  q: { projectId: string; candidateId: string; inputsKey: string },
): Promise<ReusableEvidence | null> {
  const r = await db.evidence.findFirst({
    where: {
      inputsKey: q.inputsKey,
      status: "pass",
      coverage: "checked_supported",
      reusedFrom: null,
      candidateId: { not: q.candidateId },
      candidate: { projectId: q.projectId },
    },
    orderBy: [{ completedAt: "asc" }, { id: "asc" }],
  });
  if (!r) return null;
  return {
    id: r.id,
    candidateId: r.candidateId,
    checkId: r.checkId,
    kind: r.kind,
    status: "pass",
    coverage: "checked_supported",
    durationMs: r.durationMs,
    timeoutSeconds: r.timeoutSeconds,
    metrics: r.metrics as Record<string, number>,
    outputKey: r.outputKey,
    command: r.command,
    tests: (r.tests as unknown[] | null) ?? null,
    attachments: r.attachments,
    detail: r.detail,
  };
}

export type VerificationOutcome =
  | {
      status: "stale";
      canonicalGeneration: number;
      /** A stacked Candidate that failed on one below it not yet passed: composed again once that one left (docs/landing.md). */
      waitsForBelow?: string;
    }
  | {
      status: "rejected";
      reason: string;
      gaps: string[];
      gate?: GateResult | null;
      /** A merge conflict's Tasks whose ChangeSets could not apply (work-graph/conflict-repair.ts). */
      conflictTasks?: string[];
      /** The Task whose ChangeSet first fails the failing check (apps/worker/src/verification/culprit.ts). */
      culprit?: Culprit | null;
    }
  | { status: "verified"; gate: GateResult; humanGate: boolean; treeHash: string };

/** The workflow's final state change; false when the Candidate had already left the open states. */
export async function finishCandidateVerification(
  ctx: TxContext,
  /** eventKey: a check rerun finishes the same Candidate again; its Events take the rerun's ID. */
  c: { candidateId: string; changeId: string; eventKey?: string },
  o: VerificationOutcome,
  deps: StateDeps,
): Promise<boolean> {
  const owner = await lockResourceRow(ctx, `change:${c.changeId}`);
  const now = deps.now();
  const data: Omit<Prisma.CandidateUpdateManyMutationInput, "status"> =
    o.status === "stale"
      ? {}
      : o.status === "rejected"
        ? {
            rejectionReason: o.reason,
            ...(o.gate ? { gate: o.gate as unknown as Prisma.InputJsonValue } : {}),
            ...(o.culprit ? { culprit: o.culprit as unknown as Prisma.InputJsonValue } : {}),
          }
        : { gate: o.gate as unknown as Prisma.InputJsonValue };
  const moved = await moveCandidates(ctx.tx, { id: c.candidateId }, o.status, { data, among: IN_PROGRESS });
  if (moved === 0) return false;
  if (o.status === "stale" && o.waitsForBelow) {
    const request = {
      recomposeFrom: c.candidateId,
      generation: o.canonicalGeneration,
      canonicalAfter: o.waitsForBelow,
    };
    await waitOnStack(ctx, c.changeId, request, now);
  }
  // Its ChangeSets conflict on this generation: the Change waits for its Tasks to be re-run there.
  if (o.status === "rejected" && o.reason === "merge conflict") {
    await moveChanges(ctx.tx, { id: c.changeId }, "conflicted");
  }
  const ev = <T extends EventType>(type: T, payload: EventPayload<T>) =>
    candidateEvent(owner, type, c.eventKey ?? c.candidateId, payload, now);
  const events =
    o.status === "stale"
      ? [ev("candidate.stale", { candidateId: c.candidateId, canonicalGeneration: o.canonicalGeneration })]
      : o.status === "rejected"
        ? [ev("candidate.rejected", { candidateId: c.candidateId, reason: o.reason, gaps: o.gaps })]
        : [
            ev("candidate.verified", { candidateId: c.candidateId, humanGate: o.humanGate }),
            ...(o.humanGate ? [await approvalAsked(ctx, c, o.treeHash, ev, now)] : []),
          ];
  await appendToOutbox(ctx, events, deps);
  // A Task's attempts picked by its rule, once this result lets it pick (work-graph/attempts.ts).
  if (o.status !== "stale") await pickByRule(ctx, owner, deps);
  return true;
}

/**
 * A verified Candidate behind the human gate asks for approval, unless a person already approved
 * this very tree on another Candidate of the Change (a recomposition that changed nothing): then
 * that approval is carried over, in this transaction, with a note saying where it came from.
 */
async function approvalAsked(
  ctx: TxContext,
  c: { candidateId: string; changeId: string },
  treeHash: string,
  ev: <T extends EventType>(type: T, payload: EventPayload<T>) => ReturnType<typeof buildEvent>,
  now: Date,
) {
  const prior = await earlierApproval(ctx.tx, c.changeId, c.candidateId, treeHash);
  if (!prior) return ev("approval.requested", { candidateId: c.candidateId, treeHash });
  await ctx.tx.approval.create({
    data: {
      candidateId: c.candidateId,
      decision: "granted",
      treeHash,
      decidedBy: prior.decidedBy,
      note: `carried over from ${prior.candidateId}: the composed tree is byte-identical to the one approved there`,
      decidedAt: now,
    },
  });
  return ev("approval.granted", {
    candidateId: c.candidateId,
    treeHash,
    approverId: prior.decidedBy,
    carriedFrom: prior.candidateId,
  });
}

/** Counts a browser session against the per-Candidate limit; false once the limit is reached. */
export async function takeBrowserRun(db: Db, candidateId: string, limit: number): Promise<boolean> {
  const n = await db.$executeRaw`
    UPDATE candidates SET browser_runs = browser_runs + 1 WHERE id = ${candidateId} AND browser_runs < ${limit}`;
  return n === 1;
}
