"use client";

import {
  analyticsLagText,
  bucketLabel,
  chartRows,
  isAllowedCombination,
  METRIC_BUCKETS,
  METRIC_RANGES,
  type MetricBucketSize,
  type MetricRange,
  totalsByName,
} from "@rhumbatron/core";
import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { useTRPC } from "../../trpc/client.tsx";
import { Empty, NotReady, Panel } from "../query-state.tsx";
import { seriesElements } from "./chart-elements.tsx";
import { eventSeries } from "./chart-series.ts";
import { ChecksPanel } from "./checks-panel.tsx";
import { LandingPanels } from "./landing-panel.tsx";
import { SandboxPanel } from "./sandbox-panel.tsx";

/** Shown first when nothing is picked yet: the lifecycle a reader usually asks about. */
const DEFAULT_METRICS = ["change_created", "task_completed", "task_failed", "candidate_created", "promotion_completed"];

/**
 * The tenant's metrics over one chosen window (docs/metrics.md): how long Changes take to land and
 * how deep the landing queue is, each check's durations and flake rate, Sandbox seconds, and the
 * lifecycle Events per hour or day. Counts are bars or steps, never smoothed curves.
 */
export function MetricsView({ tenantId }: { tenantId: string }) {
  const view = useMetricsView(tenantId);
  const { range, bucket, lag, data } = view;
  return (
    <div className="space-y-4">
      {lag.data && <LagNotice lag={lag.data} />}
      <div className="flex flex-wrap items-center justify-between gap-3">
        <p className="text-sm text-slate-500">Every chart below covers the same window, in UTC.</p>
        <WindowControls view={view} />
      </div>
      <LandingPanels tenantId={tenantId} range={range} bucket={bucket} />
      <ChecksPanel tenantId={tenantId} range={range} bucket={bucket} />
      <SandboxPanel tenantId={tenantId} range={range} bucket={bucket} />
      <Panel title={`Events per ${bucket}, last ${range}`} testId="metrics">
        <EventsChart view={view} />
        <p className="mt-2 text-xs text-slate-500">
          One column per {bucket}: each lifecycle Event the analytics projector counted, stacked by kind.
        </p>
      </Panel>
      {data && <TotalsPanel view={view} data={data} />}
    </div>
  );
}

type MetricsViewState = ReturnType<typeof useMetricsView>;
type SeriesData = NonNullable<MetricsViewState["data"]>;

/** The chosen window, the Events picked for the chart, and the queries that fill the page. */
function useMetricsView(tenantId: string) {
  const trpc = useTRPC();
  const [range, setRange] = useState<MetricRange>("7d");
  const [bucket, setBucket] = useState<MetricBucketSize>("day");
  const [picked, setPicked] = useState<string[] | null>(null);
  const series = useQuery(
    trpc.metrics.series.queryOptions(
      { tenantId, range, bucket },
      { refetchInterval: 60_000, placeholderData: (p) => p },
    ),
  );

  // Asked more often than the chart: it says whether the chart can be trusted to be current.
  const lag = useQuery(trpc.metrics.lag.queryOptions({ tenantId }, { refetchInterval: 5_000 }));

  const data = series.data;
  const totals = useMemo(() => (data ? totalsByName(data.points, data.names) : {}), [data]);
  const selected = useMemo(() => {
    if (picked) return picked;
    const withData = (data?.names ?? []).filter((n) => (totals[n] ?? 0) > 0);
    return withData.length ? withData.slice(0, 6) : DEFAULT_METRICS;
  }, [picked, data, totals]);
  const rows = useMemo(
    () => (data ? chartRows(data.points, { from: data.from, to: data.to }, data.bucket, selected) : []),
    [data, selected],
  );
  const toggle = (name: string) =>
    setPicked((cur) => {
      const base = cur ?? selected;
      return base.includes(name) ? base.filter((n) => n !== name) : [...base, name];
    });
  const pickRange = (r: MetricRange) => {
    setRange(r);
    if (!isAllowedCombination(r, bucket)) setBucket("day");
  };
  return { range, bucket, setBucket, series, lag, data, totals, selected, rows, toggle, pickRange };
}

/** How far behind the analytics are, so a reader knows whether the charts are current. */
function LagNotice({ lag }: { lag: NonNullable<MetricsViewState["lag"]["data"]> }) {
  return (
    <p
      data-testid="metrics-lag"
      data-state={lag.upToDate ? "current" : "behind"}
      data-waiting={lag.waiting}
      title={
        lag.oldestWaitingSince
          ? `The oldest Event not yet counted reached its stream at ${new Date(lag.oldestWaitingSince).toISOString()}`
          : undefined
      }
      className={`text-sm ${lag.upToDate ? "text-slate-500" : "text-amber-700"}`}
    >
      {lag.upToDate
        ? "Analytics are up to date."
        : `Analytics trail the work: ${analyticsLagText(lag)}. The charts catch up as they are counted.`}
    </p>
  );
}

/** The range and the bucket size every chart on the page shares. */
function WindowControls({ view: { range, bucket, setBucket, pickRange } }: { view: MetricsViewState }) {
  return (
    <div data-testid="metrics-window" className="flex flex-wrap items-center gap-3 text-sm">
      <label className="flex items-center gap-1">
        <span className="text-slate-500">Range</span>
        <select
          data-testid="metrics-range"
          value={range}
          onChange={(e) => pickRange(e.target.value as MetricRange)}
          className="rounded border border-slate-300 bg-white px-2 py-1"
        >
          {METRIC_RANGES.map((r) => (
            <option key={r} value={r}>
              last {r}
            </option>
          ))}
        </select>
      </label>
      <label className="flex items-center gap-1">
        <span className="text-slate-500">Per</span>
        <select
          data-testid="metrics-bucket"
          value={bucket}
          onChange={(e) => setBucket(e.target.value as MetricBucketSize)}
          className="rounded border border-slate-300 bg-white px-2 py-1"
        >
          {METRIC_BUCKETS.map((b) => (
            <option key={b} value={b} disabled={!isAllowedCombination(range, b)}>
              {b}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

/** The lifecycle Events per bucket, stacked by kind; or why there is no chart yet. */
function EventsChart({ view: { series, range, rows, selected } }: { view: MetricsViewState }) {
  if (!series.isSuccess)
    return <NotReady query={series} testId="metrics-chart" what="metrics" label="Loading metrics…" />;
  if (series.data.points.length === 0)
    return (
      <Empty testId="metrics-chart">
        No events in the last {range}. Metric points appear as Changes, Tasks and Candidates move.
      </Empty>
    );
  return (
    <div data-testid="metrics-chart" data-state="ready" data-points={series.data.points.length} className="h-80 w-full">
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={rows} margin={{ top: 8, right: 16, bottom: 8, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" />
          <XAxis
            dataKey="t"
            tickFormatter={(t: number) => bucketLabel(t, series.data.bucket, series.data.range)}
            fontSize={11}
            minTickGap={24}
          />
          <YAxis allowDecimals={false} fontSize={11} width={40} />
          <Tooltip labelFormatter={(t) => `${bucketLabel(Number(t), series.data.bucket, series.data.range)} UTC`} />
          <Legend />
          {seriesElements(eventSeries(selected, series.data.names))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

/** Each Event's total over the window, with a box to show or hide it on the chart. */
function TotalsPanel({ view: { selected, totals, toggle }, data }: { view: MetricsViewState; data: SeriesData }) {
  return (
    <Panel title={`Totals, last ${data.range}`} testId="metrics-totals">
      <ul className="grid grid-cols-2 gap-2 sm:grid-cols-3">
        {data.names.map((name) => (
          <li key={name}>
            <label className="flex cursor-pointer items-center justify-between gap-2 rounded border border-slate-200 px-2 py-1 text-sm">
              <span className="flex items-center gap-2">
                <input
                  type="checkbox"
                  data-testid={`metric-toggle-${name}`}
                  checked={selected.includes(name)}
                  onChange={() => toggle(name)}
                />
                <span className="font-mono text-xs">{name}</span>
              </span>
              <span data-testid={`metric-total-${name}`} className="font-semibold">
                {totals[name] ?? 0}
              </span>
            </label>
          </li>
        ))}
      </ul>
    </Panel>
  );
}
