import {
  buildReviewPacket,
  type ComposableChangeSet,
  type ContextPacket,
  candidateFork,
  conflictReviewIds,
  type JudgedFinding,
  judgeFindings,
  type ReviewStatus,
  type ReviewVersion,
  reviewOverlaps,
} from "@rhumbatron/core";
import {
  hasConflictReview,
  recordConflictReview,
  recordContextPacket,
  taskTitlesOf,
  type VerificationInput,
  withRepoToken,
} from "@rhumbatron/db";
import type { WorkflowRun } from "@rhumbatron/runtime";
import type { WorkerContext } from "../context.ts";

/**
 * The conflict review of a Candidate (docs/verification.md, Conflict reviews), after its plan and before its
 * checks. When two ChangeSets that do not build on each other changed the same files, the model is
 * asked to review those files over a Context Packet: the base, each Task's version and the composed
 * one, each an item with an ID its findings must cite. Step `review` asks (its answer is stored, so a
 * replay does not ask again); step `review:record` records the review, every finding (supported or
 * not) and conflict_review.recorded in one transaction. One review per Candidate: when it has one,
 * nothing is asked or written again. The gate reads the findings (gateStep): a supported blocking
 * one is a gap; an advisory or unsupported one changes nothing.
 */
export type ReviewDeps = Pick<WorkerContext, "db" | "config" | "nudger" | "now" | "source"> &
  Partial<Pick<WorkerContext, "reviewer">>;

/** The verification in progress, as far as the review reads it (workflow.ts's VerificationRun). */
interface ReviewRun {
  deps: ReviewDeps;
  run: WorkflowRun;
  input: VerificationInput;
  ids: { candidateId: string };
}

type Asked = {
  packetId: string;
  status: ReviewStatus;
  model: string | null;
  reason: string | null;
  findings: JudgedFinding[];
} | null;

export async function conflictReviewStep(
  v: ReviewRun,
  composed: { commit: string; tree: string },
  /** What each ChangeSet did to each file (the workflow's compatibility input). */
  changed: () => Promise<ComposableChangeSet[]>,
) {
  const { deps, run, input, ids } = v;
  if (await hasConflictReview(deps.db, ids.candidateId)) return;
  const asked = await run.step("review", async (): Promise<Asked> => askForReview(v, composed, await changed()));
  if (!asked) return;
  await run.txStep("review:record", (ctx) =>
    recordConflictReview(ctx, { candidateId: ids.candidateId, changeId: input.change.id, ...asked }, deps),
  );
}

/** Null when no two unrelated ChangeSets changed one file: nothing to review, nothing recorded. */
async function askForReview(
  v: ReviewRun,
  composed: { commit: string; tree: string },
  changed: ComposableChangeSet[],
): Promise<Asked> {
  const { deps, input, ids } = v;
  const overlaps = reviewOverlaps(changed);
  if (overlaps.length === 0) return null;
  const reviewIds = conflictReviewIds(ids.candidateId);
  const { files, read } = await reviewFiles(deps, v, overlaps, composed.commit);
  const built = buildReviewPacket(reviewIds.packet, composed.tree, files);
  // The packet recorded first wins: a finding is judged against what is on record.
  const packet = await recordContextPacket(deps.db, {
    ...built,
    projectId: input.project.id,
    candidateId: ids.candidateId,
  });
  const tasks = await taskTitlesOf(deps.db, input.change.id);
  const involved = new Set(overlaps.flatMap((o) => o.changeSets));
  const reviewer = deps.reviewer;
  const answer = reviewer
    ? await reviewer.review({
        candidateId: ids.candidateId,
        changeTitle: input.change.title,
        tasks: input.changeSets
          .filter((cs) => involved.has(cs.id))
          .map((cs) => ({
            key: cs.taskKey,
            title: tasks.find((t) => t.key === cs.taskKey)?.title ?? cs.taskKey,
            changeSetId: cs.id,
          })),
        packet,
        contents: await contentsOf(packet, read),
      })
    : ({ status: "skipped", reason: "no model is configured for conflict reviews" } as const);
  return {
    packetId: packet.id,
    status: answer.status,
    model: answer.status === "skipped" ? null : answer.model,
    reason: answer.status === "completed" ? null : answer.reason,
    findings: answer.status === "completed" ? judgeFindings(answer.findings, packet) : [],
  };
}

type BlobReader = (blob: string) => Promise<Uint8Array>;

/**
 * Every version of every overlapping path: the base and the composed version from cand-<id>, each
 * Task's from its own fork, with a reader of their blobs. A version that does not have the file
 * (it was added by the Tasks) is left out.
 */
async function reviewFiles(
  deps: ReviewDeps,
  v: ReviewRun,
  overlaps: { path: string; changeSets: string[] }[],
  composedCommit: string,
): Promise<{ files: { path: string; versions: ReviewVersion[] }[]; read: BlobReader }> {
  const { input } = v;
  const fork = candidateFork(input.candidate.id);
  const trees = new Map<string, Map<string, { blob: string; size: number }>>();
  const where = new Map<string, string>();
  const list = (repo: string, commit: string) =>
    withRepoToken(deps.db, { repo, mode: "read", purpose: "conflict review" }, deps.config, deps.now, async (t) => {
      const files = await deps.source.files(repo, t, commit);
      for (const f of files) where.set(f.oid, repo);
      return new Map(files.map((f) => [f.path, { blob: f.oid, size: f.size }]));
    });
  trees.set("base", await list(fork, input.candidate.baseCommit));
  for (const cs of input.changeSets) {
    if (overlaps.some((o) => o.changeSets.includes(cs.id))) trees.set(cs.id, await list(cs.fork, cs.commit));
  }
  trees.set("composed", await list(fork, composedCommit));
  const version = (key: string, path: string, why: string): ReviewVersion[] => {
    const f = trees.get(key)?.get(path);
    return f ? [{ path, ...f, why }] : [];
  };
  const files = overlaps.map((o) => ({
    path: o.path,
    versions: [
      ...version("base", o.path, `the base (generation ${input.candidate.baseGeneration})`),
      ...input.changeSets
        .filter((cs) => o.changeSets.includes(cs.id))
        .flatMap((cs) => version(cs.id, o.path, `Task ${cs.taskKey}'s version (${cs.id})`)),
      ...version("composed", o.path, "the composed version"),
    ],
  }));
  const read: BlobReader = (blob) => {
    const repo = where.get(blob) ?? fork;
    return withRepoToken(deps.db, { repo, mode: "read", purpose: "conflict review" }, deps.config, deps.now, (t) =>
      deps.source.readBlob(repo, t, blob),
    );
  };
  return { files, read };
}

/** Each item's text; a binary file is named as such instead of sent. */
async function contentsOf(packet: ContextPacket, read: BlobReader): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const item of packet.items) {
    const bytes = await read(item.blob);
    out[item.id] = bytes.includes(0) ? "(a binary file, not shown)" : new TextDecoder().decode(bytes);
  }
  return out;
}
