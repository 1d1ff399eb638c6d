"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../trpc/client.tsx";
import { LoadError, Loading, Panel } from "../query-state.tsx";
import type { AttemptsView, AttemptView } from "./types.ts";

const RULE_WORDS: Record<string, string> = {
  person: "a person picks one",
  first_verified: "the first attempt verified is picked",
  fewest_lines: "once every attempt has a result, the verified one changing the fewest lines is picked",
};

/**
 * The attempts of the Change's Task that asked for several, side by side (docs/attempts.md): each
 * one's Agent, run, lines changed, Candidate with its checks, tokens and cost; which one is picked,
 * and a Pick button for an attempt whose Candidate is verified (the API refuses a caller below
 * approver, or an attempt that cannot be picked, with the reason shown). Nothing when no Task asked.
 */
export function AttemptsPanel({
  tenantId,
  projectId,
  changeId,
  live,
}: {
  tenantId: string;
  projectId: string;
  changeId: string;
  live: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const query = useQuery(
    trpc.change.attempts.queryOptions({ tenantId, changeId }, { refetchInterval: live ? 2_000 : false }),
  );
  const pick = useMutation(
    trpc.change.pickAttempt.mutationOptions({
      onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.change.attempts.queryKey() }),
    }),
  );
  if (query.isPending) return <Loading testId="attempts" label="Loading attempts…" />;
  if (query.isError) {
    return (
      <LoadError testId="attempts" what="attempts" message={query.error.message} onRetry={() => void query.refetch()} />
    );
  }
  const view = query.data;
  if (!view) return null;
  return (
    <Panel title={`Attempts of Task ${view.taskKey}`} testId="attempts-panel">
      <p className="mb-2 text-sm text-slate-600" data-testid="attempts-rule">
        {view.picked === null
          ? `Nothing lands until one is picked: ${RULE_WORDS[view.rule] ?? view.rule}.`
          : `Attempt ${view.picked} was picked; the others' Candidates are cancelled.`}
      </p>
      {pick.error && (
        <p role="alert" data-testid="attempts-error" className="mb-2 text-sm text-red-700">
          {pick.error.message}
        </p>
      )}
      <ul data-testid="attempts" data-state="ready" className="grid gap-3 sm:grid-cols-2 lg:grid-cols-4">
        {view.attempts.map((a) => (
          <AttemptCard
            key={a.attempt}
            a={a}
            projectId={projectId}
            pickedAttempt={view.picked}
            pickPending={pick.isPending}
            onPick={() => pick.mutate({ tenantId, changeId, attempt: a.attempt })}
          />
        ))}
      </ul>
    </Panel>
  );
}

/** One attempt: its Agent, run, diff, Candidate with its checks, and cost; picked, or a Pick button once verified. */
function AttemptCard({
  a,
  projectId,
  pickedAttempt,
  pickPending,
  onPick,
}: {
  a: AttemptView;
  projectId: string;
  /** The attempt picked so far, or null. */
  pickedAttempt: AttemptsView["picked"];
  pickPending: boolean;
  onPick: () => void;
}) {
  const picked = pickedAttempt === a.attempt;
  return (
    <li
      data-testid={`attempt-${a.attempt}`}
      data-picked={picked ? "true" : "false"}
      className={`min-w-0 rounded border p-3 text-sm [overflow-wrap:anywhere] ${picked ? "border-emerald-400 bg-emerald-50" : "border-slate-200 bg-white"}`}
    >
      <div className="flex items-baseline justify-between gap-2">
        <span className="font-semibold">Attempt {a.attempt}</span>
        {picked && <span className="text-xs font-medium text-emerald-800">picked</span>}
      </div>
      <p className="font-mono text-xs text-slate-600">{a.agent}</p>
      <dl className="mt-2 grid grid-cols-[auto_1fr] gap-x-2 gap-y-0.5 text-xs">
        <dt className="text-slate-500">run</dt>
        <dd data-testid="attempt-run">
          {a.run ? `${a.run.status}${a.run.seconds !== null ? ` in ${a.run.seconds} s` : ""}` : "not started"}
          {a.run?.error ? `: ${a.run.error}` : ""}
        </dd>
        <dt className="text-slate-500">diff</dt>
        <dd data-testid="attempt-diff">
          {a.changeSet ? `${a.changeSet.changedLines} lines in ${a.changeSet.paths} files` : "no ChangeSet"}
        </dd>
        <dt className="text-slate-500">checks</dt>
        <dd data-testid="attempt-checks">
          {a.candidate ? (
            <>
              <a
                className="font-mono text-sky-800 underline"
                href={`/projects/${projectId}/candidates/${a.candidate.id}`}
              >
                {a.candidate.status}
              </a>{" "}
              ({a.candidate.passed} passed, {a.candidate.failed} failed)
            </>
          ) : (
            "no Candidate yet"
          )}
        </dd>
        <dt className="text-slate-500">cost</dt>
        <dd>
          {a.tokens === null ? "not reported" : `${a.tokens.toLocaleString("en-US")} tokens`}
          {a.costUsd !== null ? `, $${a.costUsd.toFixed(4)}` : ""}
        </dd>
      </dl>
      {pickedAttempt !== a.attempt && a.candidate?.status === "verified" && (
        <button
          type="button"
          data-testid={`attempt-pick-${a.attempt}`}
          disabled={pickPending}
          onClick={onPick}
          className="mt-2 rounded bg-sky-700 px-3 py-1 text-xs font-medium text-white hover:bg-sky-800 disabled:opacity-50"
        >
          Pick attempt {a.attempt}
        </button>
      )}
    </li>
  );
}
