"use client";

import { useQuery } from "@tanstack/react-query";
import { LIVE_REFETCH_MS } from "../../lib/candidate-view.ts";
import { useTRPC } from "../../trpc/client.tsx";
import { PatchDiff } from "../patch-diff.tsx";
import { Empty, NotReady, Panel } from "../query-state.tsx";
import { Hash } from "./badges.tsx";
import type { CandidateDetail } from "./types.ts";

const blobHref = (key: string) => `/api/blobs/${key.split("/").map(encodeURIComponent).join("/")}`;

/** The ChangeSets in composition order on the base generation, the composed tree, and the patch. */
export function CompositionPanel({
  tenantId,
  candidate,
  live,
}: {
  tenantId: string;
  candidate: CandidateDetail;
  live: boolean;
}) {
  return (
    <Panel title="Composition" testId="candidate-composition">
      <dl className="mb-4 grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-sm">
        <dt className="text-slate-500">Base generation</dt>
        <dd data-testid="candidate-base-generation">
          <span className="font-mono">S{candidate.baseGeneration}</span> <Hash value={candidate.baseCommit} />
        </dd>
        <dt className="text-slate-500">Composed tree</dt>
        <dd>
          <Hash value={candidate.composedTree} testId="candidate-composed-tree" full />
        </dd>
        <dt className="text-slate-500">Composed commit</dt>
        <dd>
          <Hash value={candidate.composedCommit} testId="candidate-composed-commit" full />
        </dd>
      </dl>
      <h3 className="mb-2 text-sm font-medium">ChangeSets, in composition order</h3>
      {candidate.changeSets.length === 0 ? (
        <Empty testId="candidate-changesets">This Candidate lists no ChangeSets.</Empty>
      ) : (
        <ol
          data-testid="candidate-changesets"
          className="mb-4 divide-y divide-slate-100 rounded border border-slate-200"
        >
          {candidate.changeSets.map((cs, i) => (
            <li
              key={cs.id}
              data-testid="changeset-row"
              className="flex flex-wrap items-center gap-x-4 gap-y-1 px-3 py-2 text-sm"
            >
              <span className="font-mono text-slate-400">{i + 1}.</span>
              <span className="font-mono text-xs">{cs.id}</span>
              <span className="text-slate-500">
                Task <span className="font-mono text-xs">{cs.taskId}</span> · agent {cs.agentId}
              </span>
              <Hash value={cs.commit} />
              <span className="text-slate-500">{cs.paths.length} files</span>
              {cs.paths.length === 0 ? (
                <span data-testid="changeset-empty" className="text-slate-500">
                  changes no file
                </span>
              ) : cs.patchRef ? (
                <a className="text-sky-700 underline" href={blobHref(cs.patchRef)} target="_blank" rel="noreferrer">
                  patch ({cs.patchBytes} bytes{cs.patchTruncated ? ", truncated" : ""})
                </a>
              ) : (
                <span className="text-slate-400">no patch stored</span>
              )}
            </li>
          ))}
        </ol>
      )}
      <h3 className="mb-2 text-sm font-medium">Candidate patch (composed tree against the base)</h3>
      <CandidatePatch
        tenantId={tenantId}
        candidateId={candidate.id}
        composed={candidate.composedCommit !== null}
        live={live}
      />
    </Panel>
  );
}

function CandidatePatch(props: { tenantId: string; candidateId: string; composed: boolean; live: boolean }) {
  const { tenantId, candidateId, composed, live } = props;
  const trpc = useTRPC();
  // The workflow stores the patch as it composes: while the Candidate is live, ask until it is there.
  const patch = useQuery(
    trpc.candidate.patch.queryOptions(
      { tenantId, candidateId },
      { refetchInterval: (q) => (live && !q.state.data?.stored ? LIVE_REFETCH_MS : false) },
    ),
  );
  if (!patch.isSuccess)
    return <NotReady query={patch} testId="candidate-patch" what="the patch" label="Loading the patch…" />;
  if (!patch.data.stored) {
    return (
      <div
        data-testid="candidate-patch"
        data-state="not-stored"
        className="rounded border border-dashed border-slate-300 p-4 text-sm text-slate-600"
      >
        Patch not stored{composed ? "" : " yet: the Candidate has not been composed"}. Expected at{" "}
        <code className="font-mono text-xs">{patch.data.key}</code>.
      </div>
    );
  }
  if (patch.data.bytes === 0) {
    return (
      <div
        data-testid="candidate-patch"
        data-state="empty"
        className="rounded border border-dashed border-slate-300 p-4 text-sm text-slate-600"
      >
        No difference: the composed tree is the base's tree, so this Candidate changes no file.
      </div>
    );
  }
  return (
    <div data-testid="candidate-patch" data-state="ready">
      <p className="mb-2 text-xs text-slate-500">
        {patch.data.bytes} bytes ·{" "}
        <a className="text-sky-700 underline" href={blobHref(patch.data.key)} target="_blank" rel="noreferrer">
          raw
        </a>
        {patch.data.truncated && (
          <span data-testid="candidate-patch-truncated" className="ml-2 text-amber-800">
            truncated at the size limit
            {patch.data.fullBytes !== null ? ` (full patch ${patch.data.fullBytes} bytes)` : ""}
          </span>
        )}
      </p>
      <PatchDiff text={patch.data.text} />
    </div>
  );
}

export { blobHref };
