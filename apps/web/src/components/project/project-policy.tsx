"use client";

import { changedPolicyFields } from "@rhumbatron/core";
import type { ProjectPolicyVersion } from "@rhumbatron/db";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import { Notice } from "../notice.tsx";
import { NotReady, Panel } from "../query-state.tsx";
import { PolicyDocumentView } from "./policy-document.tsx";
import { PolicyEditor } from "./policy-editor.tsx";

/** Who made a version, or that it is the defaults. */
const madeBy = (p: ProjectPolicyVersion) =>
  p.implicit
    ? "the defaults: nobody has edited this project's policy"
    : `set by ${p.createdBy} on ${p.createdAt?.toLocaleString()}`;

/**
 * A project's verification policy (docs/verification.md, The project's policy): the active version in words,
 * its history, and for admins the editor. Every plan records the version it was made under.
 */
export function ProjectPolicy({
  tenantId,
  projectId,
  canEdit,
}: {
  tenantId: string;
  projectId: string;
  canEdit: boolean;
}) {
  const trpc = useTRPC();
  const active = useQuery(
    trpc.policy.get.queryOptions(
      { tenantId, projectId },
      { retry: (n, err) => err.data?.code !== "NOT_FOUND" && err.data?.code !== "FORBIDDEN" && n < 2 },
    ),
  );
  if (!active.isSuccess) {
    if (active.error?.data?.code === "NOT_FOUND") {
      return (
        <Notice title="Project not found" tone="error">
          There is no project {projectId} in this tenant.
        </Notice>
      );
    }
    return <NotReady query={active} testId="policy-active" what="the policy" label="Loading the policy…" />;
  }
  const p = active.data;
  return (
    <div className="space-y-6">
      <Panel title={`Active policy: ${p.policyId} v${p.version}`} testId="policy-active">
        <p data-testid="policy-version" data-version={p.version} className="mb-3 text-sm text-slate-600">
          Version {p.version}, {madeBy(p)}. Each Candidate's plan records the version it was made under; promotion
          refuses a plan made under another version.
        </p>
        <PolicyDocumentView document={p.document} />
      </Panel>
      {canEdit && (
        <Panel title="Edit the policy" testId="policy-edit-panel">
          <PolicyEditor tenantId={tenantId} projectId={projectId} version={p.version} document={p.document} />
        </Panel>
      )}
      <Panel title="History" testId="policy-history-panel">
        <PolicyHistory tenantId={tenantId} projectId={projectId} />
      </Panel>
    </div>
  );
}

function PolicyHistory({ tenantId, projectId }: { tenantId: string; projectId: string }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.policy.history.queryOptions({ tenantId, projectId }));
  if (!q.isSuccess) return <NotReady query={q} testId="policy-history" what="the history" label="Loading…" />;
  const list = q.data;
  return (
    <ol data-testid="policy-history" data-state="ready" className="divide-y divide-slate-100 text-sm">
      {list.map((v, i) => {
        const before = list[i + 1];
        const changed = before ? changedPolicyFields(before.document, v.document) : [];
        return (
          <li key={v.version} data-testid="policy-history-row" data-version={v.version} className="space-y-1 py-2">
            <div className="flex flex-wrap items-baseline gap-x-3">
              <span className="w-10 font-mono font-semibold">v{v.version}</span>
              <span className="text-slate-600">{madeBy(v)}</span>
              {changed.length > 0 && <span className="text-xs text-slate-500">changed {changed.join(", ")}</span>}
            </div>
            <details>
              <summary className="cursor-pointer text-xs text-slate-500">Document</summary>
              <pre className="mt-1 overflow-x-auto rounded bg-slate-50 p-2 font-mono text-xs">
                {JSON.stringify(v.document, null, 2)}
              </pre>
            </details>
          </li>
        );
      })}
    </ol>
  );
}
