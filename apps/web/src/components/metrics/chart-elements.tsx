import type { MetricBucketSize, MetricRange } from "@rhumbatron/core";
import { keepPreviousData } from "@tanstack/react-query";
import { Bar, Line } from "recharts";
import { type SeriesSpec, STEP_LINE_TYPE } from "./chart-series.ts";

/** The window every metrics panel reads: whose metrics, how far back, in buckets of what size. */
export interface MetricWindow {
  tenantId: string;
  range: MetricRange;
  bucket: MetricBucketSize;
}

/** Every panel refreshes once a minute and keeps the last figures on screen while it does. */
export const METRIC_REFRESH = { refetchInterval: 60_000, placeholderData: keepPreviousData } as const;

/**
 * The recharts elements of a chart's series: bars, or step lines with a dot on every point (a lone
 * point stays visible). Called inline, so the chart sees its Bar and Line children directly.
 */
export function seriesElements(specs: readonly SeriesSpec[]) {
  return specs.map((s) =>
    s.kind === "bar" ? (
      <Bar key={s.key} dataKey={s.key} name={s.label} fill={s.color} stackId={s.stackId} isAnimationActive={false} />
    ) : (
      <Line
        key={s.key}
        dataKey={s.key}
        name={s.label}
        type={STEP_LINE_TYPE}
        stroke={s.color}
        strokeWidth={2}
        dot={{ r: 3 }}
        isAnimationActive={false}
      />
    ),
  );
}

/** A figure with its label, for the row of numbers above a chart. */
export function Figure({
  label,
  value,
  testId,
  hint,
}: {
  label: string;
  value: string;
  testId: string;
  hint?: string;
}) {
  return (
    <div className="rounded border border-slate-200 px-3 py-2" title={hint}>
      <div className="text-xs text-slate-500">{label}</div>
      <div data-testid={testId} className="font-semibold">
        {value}
      </div>
    </div>
  );
}
