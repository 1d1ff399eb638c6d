"use client";

import type { AppRouter } from "@rhumbatron/api";
import { durationText, percentText } from "@rhumbatron/core";
import { useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { useTRPC } from "../../trpc/client.tsx";
import { Empty, NotReady, Panel } from "../query-state.tsx";
import { METRIC_REFRESH, type MetricWindow, seriesElements } from "./chart-elements.tsx";
import { CHECK_DURATION_SERIES, checkDurationRows, durationUnit } from "./chart-series.ts";

type CheckRow = inferRouterOutputs<AppRouter>["metrics"]["checks"]["checks"][number];

const ms = (v: number | null) => durationText(v === null ? null : v / 1000);

/** Each check's durations and flake rate over the chosen window, with the definition of flaky. */
export function ChecksPanel({ tenantId, range, bucket }: MetricWindow) {
  const trpc = useTRPC();
  const q = useQuery(trpc.metrics.checks.queryOptions({ tenantId, range, bucket }, METRIC_REFRESH));
  let body: React.ReactNode;
  if (!q.isSuccess) body = <NotReady query={q} testId="check-metrics" what="check metrics" label="Loading checks…" />;
  else if (q.data.checks.length === 0)
    body = (
      <Empty testId="check-metrics">
        No check ran in the last {q.data.range}. When Candidates are verified, each check's durations and flake rate
        appear here.
      </Empty>
    );
  else {
    const checks = q.data.checks;
    const unit = durationUnit(Math.max(0, ...checks.map((c) => (c.p90Ms ?? 0) / 1000)));
    const rows = checkDurationRows(checks, unit);
    body = (
      <div data-testid="check-metrics" data-state="ready" className="space-y-3">
        {rows.length > 0 && (
          <div data-testid="check-durations-chart" className="w-full" style={{ height: 48 + rows.length * 36 }}>
            <ResponsiveContainer width="100%" height="100%">
              <BarChart data={rows} layout="vertical" margin={{ top: 8, right: 16, bottom: 8, left: 8 }}>
                <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" />
                <XAxis type="number" fontSize={11} unit={` ${unit.label}`} />
                <YAxis type="category" dataKey="checkId" fontSize={11} width={120} />
                <Tooltip formatter={(v, name) => [`${v} ${unit.label}`, `duration, ${name}`]} />
                <Legend />
                {seriesElements(CHECK_DURATION_SERIES)}
              </BarChart>
            </ResponsiveContainer>
          </div>
        )}
        <CheckTable checks={checks} />
      </div>
    );
  }
  return (
    <Panel title={`Checks, last ${range}`} testId="checks-panel">
      {body}
      <p data-testid="flake-definition" className="mt-2 text-xs text-slate-500">
        A run is a check's result that passed, failed or errored (a skipped check did not run); durations are the runs
        that completed in the window. A check is <strong>flaky</strong> on a tree when it failed or errored on that
        exact composed tree and later passed on it: a rerun on the same Candidate, or another Candidate composed to the
        identical tree. Flake rate = flaky trees ÷ trees the check ran on, counting the trees whose first run of the
        check was in the window. Failed: trees it failed or errored on at least once.
      </p>
    </Panel>
  );
}

/** One row per check: its runs, durations, trees, failures, flakes and reruns asked. */
function CheckTable({ checks }: { checks: CheckRow[] }) {
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-sm">
        <thead className="text-xs text-slate-500">
          <tr>
            <th className="py-1 pr-3 font-normal">Check</th>
            <th className="py-1 pr-3 font-normal">Runs</th>
            <th className="py-1 pr-3 font-normal">p50</th>
            <th className="py-1 pr-3 font-normal">p90</th>
            <th className="py-1 pr-3 font-normal">Longest</th>
            <th className="py-1 pr-3 font-normal">Trees</th>
            <th className="py-1 pr-3 font-normal">Failed</th>
            <th className="py-1 pr-3 font-normal">Flaky</th>
            <th className="py-1 pr-3 font-normal">Flake rate</th>
            <th className="py-1 pr-3 font-normal">Reruns asked</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {checks.map((c) => (
            <tr key={c.checkId} data-testid="check-row" data-check-id={c.checkId}>
              <td className="py-1 pr-3 font-mono text-xs">{c.checkId}</td>
              <td className="py-1 pr-3">{c.runs}</td>
              <td className="py-1 pr-3">{ms(c.p50Ms)}</td>
              <td className="py-1 pr-3">{ms(c.p90Ms)}</td>
              <td className="py-1 pr-3">{ms(c.maxMs)}</td>
              <td className="py-1 pr-3">{c.trees}</td>
              <td className="py-1 pr-3">{c.failedTrees}</td>
              <td className="py-1 pr-3">{c.flakyTrees}</td>
              <td data-testid="check-flake-rate" className="py-1 pr-3 font-semibold">
                {percentText(c.flakeRate)}
              </td>
              <td className="py-1 pr-3">{c.reruns}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
