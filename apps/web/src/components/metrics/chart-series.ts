import { bucketStarts, chartRows, type MetricBucketSize } from "@rhumbatron/core";

/**
 * What the metrics charts draw, as data (docs/metrics.md). Counts are bars (stacked when they add
 * up) or step lines that hold each value until the next; nothing is drawn as a smoothed curve, so
 * one busy hour reads as one bar, not as a trend. A bucket where nothing was measured (no Change
 * landed) has no bar rather than a zero one.
 */
export type SeriesKind = "bar" | "step";

export interface SeriesSpec {
  key: string;
  label: string;
  color: string;
  kind: SeriesKind;
  /** Bars with the same stack add up in one column. */
  stackId?: string;
}

/** The only line shape a series may have: a step held from its point until the next one. */
export const STEP_LINE_TYPE = "stepAfter" as const;

export const PALETTE = [
  "#0f766e",
  "#b91c1c",
  "#1d4ed8",
  "#a16207",
  "#7e22ce",
  "#be185d",
  "#15803d",
  "#c2410c",
  "#334155",
  "#0e7490",
];

/** Event counts per bucket: one stacked column per bucket, one colour per metric (fixed by its place in `all`). */
export function eventSeries(selected: readonly string[], all: readonly string[]): SeriesSpec[] {
  return selected.map((name) => ({
    key: name,
    label: name,
    color: PALETTE[Math.max(all.indexOf(name), 0) % PALETTE.length] as string,
    kind: "bar",
    stackId: "events",
  }));
}

/** Request -> landed per bucket of landing: p50 and p90 side by side. */
export const LANDING_SERIES: SeriesSpec[] = [
  { key: "p50", label: "p50", color: "#0f766e", kind: "bar" },
  { key: "p90", label: "p90", color: "#a16207", kind: "bar" },
];

export const QUEUE_DEPTH_SERIES: SeriesSpec[] = [
  { key: "depth", label: "Changes in the landing queue", color: "#1d4ed8", kind: "step" },
];

export const CHECK_DURATION_SERIES: SeriesSpec[] = [
  { key: "p50", label: "p50", color: "#0f766e", kind: "bar" },
  { key: "p90", label: "p90", color: "#a16207", kind: "bar" },
];

const SANDBOX_COLORS: Record<string, string> = { agent: "#7e22ce", candidate: "#0e7490" };

/** Sandbox seconds per bucket, stacked by kind (agent runs, Candidate checks). */
export function sandboxSeries(kinds: readonly string[]): SeriesSpec[] {
  return kinds.map((kind) => ({
    key: kind,
    label: kind === "agent" ? "Agent runs" : kind === "candidate" ? "Candidate checks" : kind,
    color: SANDBOX_COLORS[kind] ?? "#334155",
    kind: "bar",
    stackId: "sandbox",
  }));
}

export interface DurationUnit {
  label: "s" | "min" | "h";
  seconds: number;
}

/** The unit an axis of durations reads best in, from the longest value it shows. */
export function durationUnit(maxSeconds: number): DurationUnit {
  if (maxSeconds >= 2 * 3600) return { label: "h", seconds: 3600 };
  if (maxSeconds >= 120) return { label: "min", seconds: 60 };
  return { label: "s", seconds: 1 };
}

const inUnit = (seconds: number | null, unit: DurationUnit) =>
  seconds === null ? null : Math.round((seconds / unit.seconds) * 100) / 100;

export interface LandingRow {
  t: number;
  landed: number;
  p50: number | null;
  p90: number | null;
}

/** One row per bucket of the window; p50 and p90 in `unit`, null where nothing landed. */
export function landingRows(
  buckets: readonly { bucket: Date; landed: number; p50Seconds: number | null; p90Seconds: number | null }[],
  window: { from: Date; to: Date },
  bucket: MetricBucketSize,
  unit: DurationUnit,
): LandingRow[] {
  return bucketStarts(window.from, window.to, bucket).map((start) => {
    const b = buckets.find((x) => x.bucket.getTime() === start.getTime());
    return {
      t: start.getTime(),
      landed: b?.landed ?? 0,
      p50: b ? inUnit(b.p50Seconds, unit) : null,
      p90: b ? inUnit(b.p90Seconds, unit) : null,
    };
  });
}

/** Sandbox seconds per bucket and kind, zero-filled (no charge is a real zero). */
export function sandboxRows(
  points: readonly { bucket: Date; kind: string; seconds: number }[],
  window: { from: Date; to: Date },
  bucket: MetricBucketSize,
  kinds: readonly string[],
) {
  return chartRows(
    points.map((p) => ({ bucket: p.bucket, name: p.kind, value: p.seconds })),
    window,
    bucket,
    kinds,
  );
}

/** Each check's p50 and p90 in `unit`, longest p90 first. */
export function checkDurationRows(
  checks: readonly { checkId: string; p50Ms: number | null; p90Ms: number | null }[],
  unit: DurationUnit,
) {
  return checks
    .filter((c) => c.p50Ms !== null)
    .map((c) => ({
      checkId: c.checkId,
      p50: inUnit((c.p50Ms ?? 0) / 1000, unit),
      p90: inUnit((c.p90Ms ?? 0) / 1000, unit),
    }))
    .sort((a, b) => (b.p90 ?? 0) - (a.p90 ?? 0) || a.checkId.localeCompare(b.checkId));
}

/** "Mar 10 13:45" (UTC), for a moment that is not a bucket start (a step of the queue's depth). */
export function timeLabel(t: number): string {
  const d = new Date(t);
  const day = d.toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
  return `${day} ${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")}`;
}
