import type { changeLabel } from "@rhumbatron/core";
import type { ChangeDetail } from "./types.ts";

/** The Change's heading: its title, status and risk, ID, what its status means, description and terms. */
export function ChangeHeader({
  change,
  projectId,
  label,
}: {
  change: ChangeDetail;
  projectId: string;
  label: ReturnType<typeof changeLabel>;
}) {
  const goals = change.goals as { p95LatencyMs?: number };
  const contract = change.contractChanges as { added?: string[]; removed?: string[]; changed?: string[] };
  const routes = (["added", "removed", "changed"] as const).flatMap((k) =>
    (contract[k] ?? []).map((r) => `${k}: ${r}`),
  );
  return (
    <header>
      <p className="text-sm text-slate-500">
        <a href={`/projects/${projectId}`} data-testid="project-link" className="underline">
          Project
        </a>{" "}
        / Change
      </p>
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h1 data-testid="change-title" className="text-xl font-semibold">
          {change.title}
        </h1>
        <div className="flex items-center gap-2 text-sm">
          <span
            data-testid="change-status"
            data-status={label.label}
            className={`rounded-full px-2 py-0.5 ${label.tone === "bad" ? "bg-red-100 text-red-800" : label.tone === "good" ? "bg-emerald-100 text-emerald-800" : "bg-slate-100"}`}
          >
            {label.label}
          </span>
          <span data-testid="change-risk" className="rounded-full bg-slate-100 px-2 py-0.5">
            {change.riskTier} risk
          </span>
        </div>
      </div>
      <p className="font-mono text-xs text-slate-500">{change.id}</p>
      {label.hint && (
        <p data-testid="change-status-hint" className="mt-1 text-sm text-red-800">
          {label.hint}
        </p>
      )}
      {change.description && <p className="mt-2 whitespace-pre-wrap text-sm text-slate-700">{change.description}</p>}
      {(goals.p95LatencyMs !== undefined || change.invariants.length > 0 || routes.length > 0) && (
        <ChangeTerms goals={goals} invariants={change.invariants} routes={routes} />
      )}
    </header>
  );
}

/** The Change's terms: its latency goal, its invariants and the routes its contract adds, removes or changes. */
function ChangeTerms({
  goals,
  invariants,
  routes,
}: {
  goals: { p95LatencyMs?: number };
  invariants: ChangeDetail["invariants"];
  routes: string[];
}) {
  return (
    <dl data-testid="change-terms" className="mt-3 grid gap-2 text-sm sm:grid-cols-3">
      {goals.p95LatencyMs !== undefined && (
        <div>
          <dt className="text-slate-500">Goal</dt>
          <dd>p95 below {goals.p95LatencyMs} ms</dd>
        </div>
      )}
      {invariants.length > 0 && (
        <div>
          <dt className="text-slate-500">Invariants</dt>
          <dd>
            <ul className="list-disc pl-4">
              {invariants.map((i) => (
                <li key={i}>{i}</li>
              ))}
            </ul>
          </dd>
        </div>
      )}
      {routes.length > 0 && (
        <div>
          <dt className="text-slate-500">Contract changes</dt>
          <dd className="font-mono text-xs">
            {routes.map((r) => (
              <div key={r}>{r}</div>
            ))}
          </dd>
        </div>
      )}
    </dl>
  );
}
