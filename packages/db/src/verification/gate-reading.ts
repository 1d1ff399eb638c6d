import {
  type GateResult,
  gateRequiredChecks,
  type VerificationPlan,
  withOutsidePathGaps,
  withReviewGaps,
} from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { conflictFindingsOf } from "../reviews/conflict-reviews.ts";
import type { TxContext } from "../transaction.ts";
import { quarantinedTests } from "./history.ts";
import { evidenceOf } from "./workflow-state.ts";

/**
 * A Candidate's gate read from the rows as they are now: the latest Evidence of each required
 * check, a conflict review's supported blocking findings, and a command or program Agent's edits
 * outside its Task's declared paths; a quarantined test's failure does not block (history.ts).
 * The workflow's gate step, the Candidate page and promotion
 * all read it here, so they never disagree.
 */
export async function readGate(
  db: Db | TxContext["tx"],
  candidate: { id: string; projectId: string; changeSetIds: readonly string[] },
  plan: VerificationPlan,
  now: Date = new Date(),
): Promise<GateResult> {
  const [evidence, findings, sets, quarantined] = await Promise.all([
    evidenceOf(db, candidate.id),
    conflictFindingsOf(db, candidate.id),
    db.changeSet.findMany({
      where: { id: { in: [...candidate.changeSetIds] } },
      select: { id: true, taskId: true, outsidePaths: true },
    }),
    quarantinedTests(db, candidate.projectId, now),
  ]);
  const tasks = sets.some((s) => s.outsidePaths.length > 0)
    ? await db.task.findMany({ where: { id: { in: sets.map((s) => s.taskId) } }, select: { id: true, key: true } })
    : [];
  const keyOf = new Map(tasks.map((t) => [t.id, t.key]));
  const byId = new Map(sets.map((s) => [s.id, s]));
  // In composition order, as the Candidate lists them.
  const outside = candidate.changeSetIds.flatMap((id) => {
    const s = byId.get(id);
    return s ? [{ id: s.id, taskKey: keyOf.get(s.taskId) ?? s.taskId, outsidePaths: s.outsidePaths }] : [];
  });
  return withOutsidePathGaps(withReviewGaps(gateRequiredChecks(plan, evidence, quarantined), findings), outside);
}
