import {
  CHECKS_FILE_BOUNDS,
  type EvidenceRecord,
  type PlannedCheck,
  POLICY_BOUNDS,
  type RhumbatronConfig,
} from "@rhumbatron/core";
import {
  finishCandidateVerification,
  type NewEvidence,
  repairConflict,
  type VerificationInput,
  type VerificationOutcome,
} from "@rhumbatron/db";
import { finishWorkflowInstance, type TxContext, type WorkflowRun, workflowRun } from "@rhumbatron/runtime";
import type { WorkerContext } from "../context.ts";

/**
 * What every step of a Candidate's verification shares (workflow.ts, project-steps.ts, rerun.ts):
 * the workers' parts it uses, one verification in progress, and how its Evidence is written.
 */
export type VerificationDeps = Pick<
  WorkerContext,
  | "db"
  | "config"
  | "nudger"
  | "now"
  | "source"
  | "sandbox"
  | "blobs"
  | "policy"
  | "projectChecks"
  | "browserCheck"
  | "reviewer"
>;

export type VerificationRunResult = { candidateId: string; outcome: string; detail?: string };

export const evidenceKey = (projectId: string, candidateId: string, name: string) =>
  `evidence/${projectId}/${candidateId}/${name}`;

/**
 * One verification in progress (a first verification, or a check rerun): its deps, its durable
 * step runner, what it verifies, its Sandbox reservation ID, and its two endings.
 */
export interface VerificationRun {
  deps: VerificationDeps;
  run: WorkflowRun;
  input: VerificationInput;
  ids: { candidateId: string; changeId: string; eventKey?: string };
  reservationId: string;
  finish(o: VerificationOutcome): Promise<VerificationRunResult>;
  skip(why: string): Promise<VerificationRunResult>;
}

/**
 * A first verification's instance ID is the Candidate's ID; a rerun's is its rerun ID, which also
 * keys its Events and its reservation, and `afterFinish` records the rerun's end in the same step.
 */
export function verificationRun(
  deps: VerificationDeps,
  instanceId: string,
  input: VerificationInput,
  afterFinish?: (ctx: TxContext, status: string) => Promise<void>,
): VerificationRun {
  const run = workflowRun(deps.db, instanceId, { now: deps.now, leaseSeconds: leaseSeconds(deps.config) });
  const rerun = instanceId !== input.candidate.id;
  const ids = {
    candidateId: input.candidate.id,
    changeId: input.candidate.changeId,
    ...(rerun ? { eventKey: instanceId } : {}),
  };
  const end = (output: Record<string, unknown>) =>
    finishWorkflowInstance(deps.db, instanceId, { status: "succeeded", output }, deps.now());
  return {
    deps,
    run,
    input,
    ids,
    reservationId: `sbxres_${instanceId}`,
    async finish(o) {
      await run.txStep("finish", async (ctx) => {
        const moved = await finishCandidateVerification(ctx, ids, o, deps);
        // A conflict with what landed first re-runs the conflicting Tasks by themselves, within the limit.
        if (moved && o.status === "rejected" && o.conflictTasks?.length)
          await repairConflict(
            ctx,
            { changeId: ids.changeId, tenantId: input.project.tenantId, taskKeys: o.conflictTasks },
            deps,
          );
        await afterFinish?.(ctx, o.status);
        return moved;
      });
      await end({ status: o.status });
      return { candidateId: ids.candidateId, outcome: o.status, ...("reason" in o ? { detail: o.reason } : {}) };
    },
    async skip(why) {
      await end({ skipped: input.candidate.status });
      return { candidateId: ids.candidateId, outcome: "skipped", detail: why };
    },
  };
}

/** Covers the slowest check step: a project's policy may set a check's timeout up to POLICY_BOUNDS' maximum. */
export const leaseSeconds = (config: RhumbatronConfig) =>
  Math.max(POLICY_BOUNDS.timeoutSeconds.max, CHECKS_FILE_BOUNDS.timeoutSeconds.max) + config.queues.leaseSeconds;

export type SerializedEvidence = Omit<NewEvidence, "completedAt"> & { completedAt: string };

export function evidenceFrom(
  candidateId: string,
  check: PlannedCheck,
  started: Date,
  ended: Date,
  r: {
    status: EvidenceRecord["status"];
    coverage: EvidenceRecord["coverage"];
    metrics: Record<string, number>;
    detail: string;
    durationMs?: number;
    command?: string | null;
    outputTail?: string | null;
    excerpt?: string[] | null;
    tests?: unknown[] | null;
  },
  outputKey: string | null = null,
  attachments: string[] = [],
): SerializedEvidence {
  return {
    id: `ev_${candidateId.slice(5)}_${check.id}`,
    checkId: check.id,
    kind: check.kind,
    status: r.status,
    coverage: r.coverage,
    durationMs: Math.round(r.durationMs ?? ended.getTime() - started.getTime()),
    timeoutSeconds: check.timeoutSeconds,
    metrics: r.metrics,
    outputKey,
    command: r.command ?? null,
    outputTail: r.outputTail ?? null,
    excerpt: r.excerpt ?? null,
    tests: r.tests ?? null,
    attachments,
    detail: r.detail,
    completedAt: ended.toISOString(),
  };
}

/** The Evidence of a Candidate refused before its checks ran: its composition, or its checks file. */
export function refusalEvidence(candidateId: string, what: string, lines: string[], now: Date): NewEvidence {
  return {
    id: `ev_${candidateId.slice(5)}_${what}`,
    checkId: what,
    kind: what,
    status: "fail",
    coverage: "checked_supported",
    durationMs: 0,
    timeoutSeconds: 0,
    metrics: {},
    outputKey: null,
    detail: lines.join("\n"),
    excerpt: null,
    completedAt: now,
  };
}

/** How much of a failed check's output is shown inline. */
export const OUTPUT_TAIL_LINES = 40;
