"use client";

import { useMutation } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import { Notice } from "../notice.tsx";
import { PushCommand } from "../push-command.tsx";

/**
 * A project waiting for its `git push` (docs/repositories.md, Pushing into an empty project). The
 * token given at
 * creation is never shown again; an admin can issue a new one here, which stops the old one working.
 */
export function PushWaiting({
  tenantId,
  projectId,
  canIssue,
}: {
  tenantId: string;
  projectId: string;
  canIssue: boolean;
}) {
  const trpc = useTRPC();
  const issue = useMutation(trpc.projects.pushAccess.mutationOptions());
  return (
    <Notice title="Waiting for a push" tone="info">
      <div data-testid="push-waiting" className="space-y-2">
        <p>
          This project is empty until someone runs the <span className="font-mono">git push</span> command shown when it
          was created. The pushed branch becomes main with its whole history.
        </p>
        {canIssue && (
          <button
            type="button"
            data-testid="issue-push-token"
            disabled={issue.isPending}
            onClick={() => issue.mutate({ tenantId, projectId })}
            className="rounded border border-slate-300 px-2 py-1 text-sm hover:bg-slate-100"
          >
            {issue.isPending ? "Issuing…" : "Issue a new push token"}
          </button>
        )}
        {issue.error && (
          <p role="alert" className="text-red-800">
            {issue.error.message}
          </p>
        )}
        {issue.data && <PushCommand access={issue.data} />}
      </div>
    </Notice>
  );
}
