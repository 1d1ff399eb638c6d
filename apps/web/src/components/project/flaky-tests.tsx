"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../trpc/client.tsx";
import { Empty, NotReady } from "../query-state.tsx";

/** How often the list refreshes (every recorded check may move a test). */
const TESTS_REFETCH_MS = 10_000;

const STATUS_CLASSES: Record<string, string> = {
  flaky: "bg-amber-100 text-amber-900",
  broken: "bg-red-100 text-red-800",
  ok: "bg-slate-100 text-slate-700",
};

interface TestRowView {
  checkId: string;
  testId: string;
  name: string;
  status: string;
  since: string | Date;
  rate: string;
  failedRuns: number;
  delayed: string[];
  delayedCount: number;
  quarantine: {
    owner: string;
    ownerName: string | null;
    reason: string;
    expiresAt: string | Date;
    auto: boolean;
  } | null;
}

/**
 * The project's flaky, broken and quarantined tests (docs/flaky-tests.md): each with its rate, since
 * when, the Candidates it held up, and its quarantine; an admin quarantines one with a reason, or
 * takes it out. Updated live.
 */
export function FlakyTests({
  tenantId,
  projectId,
  canQuarantine,
}: {
  tenantId: string;
  projectId: string;
  canQuarantine: boolean;
}) {
  const trpc = useTRPC();
  const client = useQueryClient();
  const q = useQuery(trpc.tests.list.queryOptions({ tenantId, projectId }, { refetchInterval: TESTS_REFETCH_MS }));
  const done = { onSettled: () => client.invalidateQueries({ queryKey: trpc.tests.pathKey() }) };
  const quarantine = useMutation(trpc.tests.quarantine.mutationOptions(done));
  const release = useMutation(trpc.tests.release.mutationOptions(done));
  if (!q.isSuccess) return <NotReady query={q} testId="flaky-tests" what="the tests" label="Loading the tests…" />;
  if (q.data.length === 0) {
    return (
      <Empty testId="flaky-tests">
        No flaky, broken or quarantined test. Tests are read from the reports the checks file names.
      </Empty>
    );
  }
  const error = quarantine.error?.message ?? release.error?.message;
  return (
    <ul data-testid="flaky-tests" data-state="ready" className="divide-y divide-slate-100 text-sm">
      {q.data.map((t) => (
        <TestItem
          key={`${t.checkId}:${t.testId}`}
          test={t}
          projectId={projectId}
          actions={
            canQuarantine
              ? {
                  pending: quarantine.isPending || release.isPending,
                  quarantine: (reason) =>
                    quarantine.mutate({ tenantId, projectId, checkId: t.checkId, testId: t.testId, reason }),
                  release: () => release.mutate({ tenantId, projectId, checkId: t.checkId, testId: t.testId }),
                }
              : null
          }
        />
      ))}
      {error && (
        <li role="alert" className="py-1 text-xs text-red-700">
          {error}
        </li>
      )}
    </ul>
  );
}

interface Actions {
  pending: boolean;
  quarantine: (reason: string) => void;
  release: () => void;
}

export function TestItem({
  test: t,
  projectId,
  actions,
}: {
  test: TestRowView;
  projectId: string;
  actions: Actions | null;
}) {
  const q = t.quarantine;
  return (
    <li
      data-testid="flaky-test"
      data-status={t.status}
      data-quarantined={String(q !== null)}
      className="space-y-1 py-2"
    >
      <div className="flex flex-wrap items-baseline gap-2">
        <span className={`rounded px-1.5 py-0.5 text-xs ${STATUS_CLASSES[t.status] ?? STATUS_CLASSES.ok}`}>
          {t.status}
        </span>
        <span className="font-mono text-xs text-slate-500">{t.checkId}</span>
        <span className="font-medium">{t.name}</span>
      </div>
      <p className="text-xs text-slate-600">
        {t.rate}, {t.failedRuns} failed; since {new Date(t.since).toLocaleString()}
        {t.delayedCount > 0 && (
          <>
            ; held up {t.delayedCount} Candidate{t.delayedCount === 1 ? "" : "s"}:{" "}
            {t.delayed.slice(-3).map((id) => (
              <a key={id} className="mr-1 font-mono underline" href={`/projects/${projectId}/candidates/${id}`}>
                {id.slice(0, 13)}
              </a>
            ))}
          </>
        )}
      </p>
      {q && (
        <p data-testid="flaky-test-quarantine" className="text-xs text-amber-900">
          Quarantined{q.auto ? " by the policy" : ` by ${q.ownerName ?? q.owner}`} until{" "}
          {new Date(q.expiresAt).toLocaleString()}: {q.reason}. Its failures do not block; each gate it lets through
          names it.
        </p>
      )}
      {actions && <QuarantineActions actions={actions} quarantined={q !== null} />}
    </li>
  );
}

/** An admin's buttons: take a quarantined test out, or quarantine one with a reason (required). */
function QuarantineActions({ actions, quarantined }: { actions: Actions; quarantined: boolean }) {
  const [reason, setReason] = useState("");
  const q = quarantined;
  return q ? (
    <button
      type="button"
      data-testid="flaky-test-release"
      disabled={actions.pending}
      onClick={actions.release}
      className="rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-50 disabled:opacity-50"
    >
      Take out of quarantine
    </button>
  ) : (
    <form
      className="flex flex-wrap gap-2"
      onSubmit={(e) => {
        e.preventDefault();
        actions.quarantine(reason);
      }}
    >
      <input
        data-testid="flaky-test-reason"
        value={reason}
        onChange={(e) => setReason(e.target.value)}
        placeholder="Why (required): who fixes it, where"
        className="min-w-64 rounded border border-slate-300 px-2 py-0.5 text-xs"
      />
      <button
        type="submit"
        data-testid="flaky-test-quarantine-submit"
        disabled={actions.pending || reason.trim() === ""}
        className="rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-50 disabled:opacity-50"
      >
        Quarantine
      </button>
    </form>
  );
}
