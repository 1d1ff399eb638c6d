import { conflictReviewIds, type JudgedFinding, type RecordedFinding, type ReviewStatus } from "@rhumbatron/core";
import { appendToOutbox, type StateDeps } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { changeEvent } from "../events/factory.ts";
import { lockResourceRow } from "../events/owners.ts";
import type { TxContext } from "../transaction.ts";
import { contextPacketOf } from "./packets.ts";

/**
 * A Candidate's conflict review and its findings (docs/verification.md, Conflict reviews), recorded with
 * conflict_review.recorded in one transaction. One review per Candidate: a retried step, or a second
 * runner of the same step, finds the first one and writes nothing.
 */
export interface NewConflictReview {
  candidateId: string;
  changeId: string;
  packetId: string | null;
  status: ReviewStatus;
  model: string | null;
  reason: string | null;
  findings: readonly JudgedFinding[];
}

/** True when this call recorded the review; false when the Candidate had one already. */
export async function recordConflictReview(ctx: TxContext, r: NewConflictReview, deps: StateDeps): Promise<boolean> {
  const owner = await lockResourceRow(ctx, `change:${r.changeId}`);
  const ids = conflictReviewIds(r.candidateId);
  const inserted = await ctx.tx.conflictReview.createMany({
    data: [
      {
        id: ids.review,
        candidateId: r.candidateId,
        packetId: r.packetId,
        status: r.status,
        model: r.model,
        reason: r.reason?.slice(0, 4000) ?? null,
      },
    ],
    skipDuplicates: true,
  });
  if (inserted.count === 0) return false;
  const findings = r.findings.map((f, i) => ({
    id: ids.finding(i + 1),
    reviewId: ids.review,
    candidateId: r.candidateId,
    n: i + 1,
    severity: f.severity,
    message: f.message,
    citations: f.citations,
    supported: f.supported,
  }));
  await ctx.tx.conflictReviewFinding.createMany({ data: findings });
  await appendToOutbox(
    ctx,
    [
      changeEvent(owner, "conflict_review.recorded", {
        key: ids.review,
        actor: { kind: "system", id: "verification" },
        now: deps.now(),
        payload: {
          candidateId: r.candidateId,
          reviewId: ids.review,
          status: r.status,
          ...(r.reason ? { reason: r.reason.slice(0, 500) } : {}),
          findings: findings.map((f) => ({ findingId: f.id, severity: f.severity, supported: f.supported })),
        },
      }),
    ],
    deps,
  );
  return true;
}

/** The findings the gate reads (every one; the gate keeps the supported blocking ones). */
export async function conflictFindingsOf(db: Db | TxContext["tx"], candidateId: string): Promise<RecordedFinding[]> {
  const rows = await db.conflictReviewFinding.findMany({ where: { candidateId }, orderBy: { n: "asc" } });
  return rows.map((f) => ({
    id: f.id,
    severity: f.severity,
    message: f.message,
    citations: f.citations,
    supported: f.supported,
  }));
}

/**
 * The review as the Candidate page and `candidate show` present it: its status and reason, the
 * packet's items, and each finding with its citations resolved to the items they name (a citation
 * that names no item is listed as not found). Null: no review (no two Tasks changed one file).
 */
export async function conflictReviewOf(db: Db, candidateId: string) {
  const review = await db.conflictReview.findUnique({
    where: { candidateId },
    include: { findings: { orderBy: { n: "asc" } } },
  });
  if (!review) return null;
  const packet = review.packetId ? await contextPacketOf(db, review.packetId) : null;
  const items = new Map((packet?.items ?? []).map((i) => [i.id, i]));
  return {
    id: review.id,
    status: review.status as ReviewStatus,
    model: review.model,
    reason: review.reason,
    createdAt: review.createdAt,
    packet: packet ? { id: packet.id, items: packet.items, omitted: packet.omitted } : null,
    findings: review.findings.map((f) => ({
      id: f.id,
      severity: f.severity as JudgedFinding["severity"],
      message: f.message,
      supported: f.supported,
      /** Blocking and supported: a gap of the gate. */
      blocks: f.supported && f.severity === "blocking",
      citations: f.citations.map((c) => {
        const item = items.get(c);
        return { id: c, found: item !== undefined, path: item?.path ?? null, why: item?.why ?? null };
      }),
    })),
  };
}
export type ConflictReviewView = NonNullable<Awaited<ReturnType<typeof conflictReviewOf>>>;

/** Whether the Candidate's one conflict review was recorded (a retried step writes none again). */
export async function hasConflictReview(db: Db, candidateId: string): Promise<boolean> {
  return (await db.conflictReview.count({ where: { candidateId } })) > 0;
}
