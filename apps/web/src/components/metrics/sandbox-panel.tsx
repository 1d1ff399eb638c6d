"use client";

import { bucketLabel, durationText } from "@rhumbatron/core";
import { useQuery } from "@tanstack/react-query";
import { BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { useTRPC } from "../../trpc/client.tsx";
import { Empty, NotReady, Panel } from "../query-state.tsx";
import { Figure, METRIC_REFRESH, type MetricWindow, seriesElements } from "./chart-elements.tsx";
import { sandboxRows, sandboxSeries } from "./chart-series.ts";

const KINDS = ["agent", "candidate"];

/** Sandbox seconds charged per bucket, stacked by what used them, over the chosen window. */
export function SandboxPanel({ tenantId, range, bucket }: MetricWindow) {
  const trpc = useTRPC();
  const q = useQuery(trpc.metrics.sandbox.queryOptions({ tenantId, range, bucket }, METRIC_REFRESH));
  let body: React.ReactNode;
  if (!q.isSuccess)
    body = <NotReady query={q} testId="sandbox-chart" what="Sandbox seconds" label="Loading Sandbox seconds…" />;
  else if (q.data.points.length === 0)
    body = (
      <Empty testId="sandbox-chart">
        No Sandbox seconds were charged in the last {q.data.range}. Agent runs and Candidate checks charge the meter
        when their workspace closes; their seconds appear here per {q.data.bucket}.
      </Empty>
    );
  else {
    const d = q.data;
    const seconds = (kind: string) => d.totals.find((t) => t.kind === kind)?.seconds ?? 0;
    body = (
      <div className="space-y-3">
        <div className="grid grid-cols-2 gap-2 text-sm sm:grid-cols-4">
          <Figure label="Agent runs" value={durationText(seconds("agent"))} testId="sandbox-total-agent" />
          <Figure
            label="Candidate checks"
            value={durationText(seconds("candidate"))}
            testId="sandbox-total-candidate"
          />
        </div>
        <div data-testid="sandbox-chart" data-state="ready" data-points={d.points.length} className="h-56 w-full">
          <ResponsiveContainer width="100%" height="100%">
            <BarChart
              data={sandboxRows(d.points, d, d.bucket, KINDS)}
              margin={{ top: 8, right: 16, bottom: 8, left: 0 }}
            >
              <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" />
              <XAxis
                dataKey="t"
                tickFormatter={(t: number) => bucketLabel(t, d.bucket, d.range)}
                fontSize={11}
                minTickGap={24}
              />
              <YAxis allowDecimals={false} fontSize={11} width={48} unit=" s" />
              <Tooltip labelFormatter={(t) => `${bucketLabel(Number(t), d.bucket, d.range)} UTC`} />
              <Legend />
              {seriesElements(sandboxSeries(KINDS))}
            </BarChart>
          </ResponsiveContainer>
        </div>
      </div>
    );
  }
  return (
    <Panel title={`Sandbox seconds, last ${range}`} testId="sandbox-panel">
      {body}
      <p className="mt-2 text-xs text-slate-500">
        Seconds charged on this environment's Sandbox meter, counted in the {bucket} the workspace was reserved in
        (UTC); workspaces still open are charged when they close. This month's meter and budget are on the Operations
        page.
      </p>
    </Panel>
  );
}
