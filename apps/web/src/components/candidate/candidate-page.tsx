"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import superjson from "superjson";
import { candidateTone, isFinalStatus, LIVE_REFETCH_MS } from "../../lib/candidate-view.ts";
import { useTRPC } from "../../trpc/client.tsx";
import { LoadError, Loading } from "../query-state.tsx";
import { Time } from "../time.tsx";
import { ApprovalPanel } from "./approval-panel.tsx";
import { Badge } from "./badges.tsx";
import { ChecksPanel, PlanPanel } from "./checks-panel.tsx";
import { CompositionPanel } from "./composition-panel.tsx";
import { ConflictReviewPanel } from "./conflict-review-panel.tsx";
import { DecisionHeader } from "./decision-header.tsx";
import { GapsPanel } from "./gaps-panel.tsx";
import { PromotePanel } from "./promote-panel.tsx";
import type { CandidateDetail } from "./types.ts";

/**
 * Whether the page shows it live: while the Candidate is composed or verified, and while the landing
 * queue is about to promote it (verified, ready, and its Change lands when ready: no Promote offered).
 */
function followsLive(c: Pick<CandidateDetail, "status" | "decision">): boolean {
  if (!isFinalStatus(c.status)) return true;
  return c.decision.state === "ready_to_promote" && !c.decision.actions.includes("promote");
}

/**
 * Whether the page keeps asking, more often than it shows live: a verified Candidate can still be
 * promoted, go stale or be cancelled, and a read that met a promotion half-way (the Candidate
 * before it, canonical after it) says "blocked" until the next read corrects it.
 */
const keepsAsking = (c: Pick<CandidateDetail, "status" | "decision">) => followsLive(c) || c.status === "verified";

/**
 * One Candidate: the decision and its actions first, then every gap, the composition, plan, every
 * Evidence record, the approval and promotion records. While it is being composed or verified the
 * page asks again every LIVE_REFETCH_MS until a final status. The rejection's reason is the
 * decision's headline (shown once).
 */
export function CandidateView(props: {
  /** The Candidate as the server read it for the first paint (superjson), or null: fetched here. */
  initial: string | null;
  tenantId: string;
  projectId: string;
  candidateId: string;
  canDecide: boolean;
  canRerun: boolean;
}) {
  const { tenantId, projectId, candidateId, canDecide, canRerun } = props;
  const trpc = useTRPC();
  const [initialData] = useState(() => (props.initial ? superjson.parse<CandidateDetail>(props.initial) : undefined));
  const candidate = useQuery(
    trpc.candidate.get.queryOptions(
      { tenantId, candidateId },
      {
        initialData,
        refetchInterval: (q) => (q.state.data && !keepsAsking(q.state.data) ? false : LIVE_REFETCH_MS),
        retry: (n, err) => err.data?.code !== "NOT_FOUND" && err.data?.code !== "FORBIDDEN" && n < 2,
      },
    ),
  );

  if (candidate.isPending) return <Loading testId="candidate-view" label="Loading the Candidate…" />;
  if (candidate.isError) {
    if (candidate.error.data?.code === "NOT_FOUND") {
      return <LoadError testId="candidate-view" what="the Candidate" message="it does not exist in this tenant" />;
    }
    return (
      <LoadError
        testId="candidate-view"
        what="the Candidate"
        message={candidate.error.message}
        onRetry={() => void candidate.refetch()}
      />
    );
  }
  const c = candidate.data;
  if (c.projectId !== projectId) {
    return <LoadError testId="candidate-view" what="the Candidate" message="it belongs to another project" />;
  }
  const live = followsLive(c);
  return (
    <div data-testid="candidate-view" data-state="ready" className="space-y-4">
      <CandidateHeader c={c} projectId={projectId} live={live} />
      <DecisionHeader tenantId={tenantId} candidate={c} canDecide={canDecide} canRerun={canRerun} />
      <VerificationLine verification={c.verification} />
      <GapsPanel candidate={c} />
      <CompositionPanel tenantId={tenantId} candidate={c} live={live} />
      <PlanPanel candidate={c} />
      <ConflictReviewPanel candidate={c} />
      <ChecksPanel candidate={c} />
      <ApprovalPanel candidate={c} />
      <PromotePanel candidate={c} />
    </div>
  );
}

/** The page's heading: where the Candidate sits, its Change's title, its ID, and its status. */
function CandidateHeader({ c, projectId, live }: { c: CandidateDetail; projectId: string; live: boolean }) {
  return (
    <header className="flex flex-wrap items-start justify-between gap-3">
      <div className="min-w-0">
        <p className="text-sm text-slate-500">
          <a className="underline" href={`/projects/${projectId}/candidates`}>
            Candidates
          </a>{" "}
          · Change{" "}
          <a className="font-mono underline" href={`/projects/${projectId}/changes/${c.changeId}`}>
            {c.changeId}
          </a>
        </p>
        <h1 data-testid="candidate-title" className="text-lg font-semibold break-words">
          {c.changeTitle ?? "A Change that no longer exists"}
        </h1>
        <p className="font-mono text-xs text-slate-500 break-all">{c.id}</p>
      </div>
      <div className="flex items-center gap-2">
        {live && (
          <span data-testid="candidate-live" className="text-xs text-sky-700" aria-live="polite">
            live · updating every {LIVE_REFETCH_MS / 1000} s
          </span>
        )}
        <Badge tone={candidateTone(c.status)} testId="candidate-status-badge">
          <span data-testid="candidate-status" data-status={c.status}>
            {c.status}
          </span>
        </Badge>
      </div>
    </header>
  );
}

/** The verification workflow's status, with when it finished or started. */
function VerificationLine({ verification }: { verification: CandidateDetail["verification"] }) {
  return (
    <p data-testid="candidate-verification" className="text-sm text-slate-600">
      Verification workflow:{" "}
      {verification ? (
        <>
          {verification.status}
          {verification.finishedAt ? (
            <>
              , finished <Time value={verification.finishedAt} />
            </>
          ) : verification.startedAt ? (
            <>
              , started <Time value={verification.startedAt} />
            </>
          ) : null}
        </>
      ) : (
        "not started"
      )}
    </p>
  );
}
