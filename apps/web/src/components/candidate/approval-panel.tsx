"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../trpc/client.tsx";
import { Panel } from "../query-state.tsx";
import { Time } from "../time.tsx";
import { Badge, Hash } from "./badges.tsx";
import { InterdiffBox } from "./interdiff-box.tsx";
import type { CandidateDetail } from "./types.ts";

const STATE_TONE = {
  pending: "pending",
  granted: "pass",
  rejected: "fail",
  not_required: "neutral",
  closed: "neutral",
} as const;

/**
 * The approval's record: whether a person must approve, the exact composed tree, and who decided
 * what. The decision itself is taken in the decision header (ApprovalActions), the page's one place
 * for actions.
 */
export function ApprovalPanel({ candidate }: { candidate: CandidateDetail }) {
  const { approval } = candidate;
  const tree = candidate.composedTree;
  // A rejected, stale or promoted Candidate's approval is closed, whatever was pending when it left verification.
  const open = candidate.decision.actions.includes("approve");
  const closed = approval.required && approval.state === "pending" && !open && candidate.decision.state !== "verifying";
  const state = (closed ? "closed" : approval.state) as keyof typeof STATE_TONE;
  return (
    <Panel
      title="Approval"
      testId="candidate-approval"
      actions={
        <Badge tone={STATE_TONE[state] ?? "neutral"} testId="approval-state">
          {state.replace("_", " ")}
        </Badge>
      }
    >
      <p className="mb-2 text-sm">
        Composed tree {open ? "to approve" : "approved or rejected"}:{" "}
        {tree ? (
          <code data-testid="approve-tree-hash" className="break-all font-mono text-xs">
            {tree}
          </code>
        ) : (
          <span data-testid="approve-tree-hash" className="text-slate-500">
            not composed yet
          </span>
        )}
      </p>
      {approval.decision && (
        <div data-testid="approval-decision" className="mb-2 rounded border border-slate-200 p-2 text-sm">
          <strong>{approval.decision.decision}</strong> by{" "}
          <span data-testid="approval-decided-by">
            {candidate.people[approval.decision.decidedBy] ?? "a removed user"}
          </span>{" "}
          on <Time value={approval.decision.decidedAt} /> for tree <Hash value={approval.decision.treeHash} />
          {approval.decision.note && (
            <p className="mt-1 whitespace-pre-wrap text-slate-700">“{approval.decision.note}”</p>
          )}
        </div>
      )}
      {!approval.required && <p className="text-sm text-slate-600">The plan does not ask for a person’s approval.</p>}
      {open && <p className="text-sm text-slate-600">Approve or reject it at the top of the page.</p>}
    </Panel>
  );
}

/**
 * The state behind the approval actions: the note, the approve and reject requests (each refreshes
 * the Candidate when it settles), and what changed since another Candidate of the Change was approved.
 */
function useApprovalActions(tenantId: string, candidate: CandidateDetail) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [note, setNote] = useState("");
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.candidate.get.queryKey() });
  const approve = useMutation(trpc.candidate.approve.mutationOptions({ onSettled: refresh }));
  const reject = useMutation(trpc.candidate.reject.mutationOptions({ onSettled: refresh }));
  const tree = candidate.composedTree;
  const ready = candidate.status === "verified" && tree !== null;
  // What changed since someone approved another Candidate of the Change.
  const interdiff = useQuery(trpc.candidate.interdiff.queryOptions({ tenantId, candidateId: candidate.id }));
  const again = interdiff.data ?? null;
  const busy = approve.isPending || reject.isPending;
  const error = approve.error ?? reject.error;
  return { note, setNote, approve, reject, tree, ready, again, busy, error };
}

/**
 * Approve or reject, bound to the exact composed tree shown: the tree hash the buttons send is the
 * one on the screen, so a Candidate recomposed since cannot be approved by a stale page. Shown only
 * while the decision offers it.
 */
export function ApprovalActions({
  tenantId,
  candidate,
  canDecide,
}: {
  tenantId: string;
  candidate: CandidateDetail;
  canDecide: boolean;
}) {
  const { note, setNote, approve, reject, tree, ready, again, busy, error } = useApprovalActions(tenantId, candidate);
  if (!canDecide) {
    return (
      <p data-testid="approval-waiting" className="text-sm">
        Waiting for an approver.
      </p>
    );
  }
  return (
    <div data-testid="approval-actions" className="w-full space-y-2">
      {again && <InterdiffBox d={again} />}
      <label className="block text-sm">
        <span>Note (required to reject)</span>
        <textarea
          data-testid="reject-note"
          value={note}
          onChange={(e) => setNote(e.target.value)}
          rows={2}
          maxLength={2000}
          className="mt-1 block w-full rounded border border-slate-300 bg-white p-2 text-sm text-slate-900"
        />
      </label>
      <div className="flex flex-wrap gap-2">
        <button
          type="button"
          data-testid="approve-button"
          disabled={!ready || busy}
          onClick={() =>
            tree &&
            approve.mutate({
              tenantId,
              candidateId: candidate.id,
              treeHash: tree,
              ...(note.trim() ? { note: note.trim() } : {}),
            })
          }
          className="rounded bg-emerald-700 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50"
        >
          {again ? "Approve this tree again" : "Approve this tree"}
        </button>
        <button
          type="button"
          data-testid="reject-button"
          disabled={!ready || busy || !note.trim()}
          title={note.trim() ? undefined : "Write why in the note first"}
          onClick={() =>
            tree && reject.mutate({ tenantId, candidateId: candidate.id, treeHash: tree, note: note.trim() })
          }
          className="rounded bg-red-700 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50"
        >
          Reject
        </button>
      </div>
      {error && (
        <p data-testid="approval-error" role="alert" className="text-sm text-red-800">
          {error.message}
        </p>
      )}
    </div>
  );
}
