/**
 * Time buckets for the metrics charts: the window a range covers, every bucket in it, and the
 * summed points of the SQL query laid out one row per bucket (zero where nothing happened). Pure,
 * shared by the metrics router (the window it queries) and the chart (the rows it draws). UTC.
 */
export const METRIC_RANGES = ["24h", "7d", "30d", "90d"] as const;
export type MetricRange = (typeof METRIC_RANGES)[number];
export const METRIC_BUCKETS = ["hour", "day"] as const;
export type MetricBucketSize = (typeof METRIC_BUCKETS)[number];

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const RANGE_MS: Record<MetricRange, number> = { "24h": DAY, "7d": 7 * DAY, "30d": 30 * DAY, "90d": 90 * DAY };
const BUCKET_MS: Record<MetricBucketSize, number> = { hour: HOUR, day: DAY };

/** The most buckets one chart draws; hourly buckets over 90 days (2,160) are refused. */
export const MAX_BUCKETS = 750;

export function bucketCount(range: MetricRange, bucket: MetricBucketSize): number {
  return Math.ceil(RANGE_MS[range] / BUCKET_MS[bucket]);
}

export function isAllowedCombination(range: MetricRange, bucket: MetricBucketSize): boolean {
  return bucketCount(range, bucket) <= MAX_BUCKETS;
}

/** The start of the bucket holding `t` (UTC hours and days are whole multiples since the epoch). */
export function bucketStart(t: Date, bucket: MetricBucketSize): Date {
  const size = BUCKET_MS[bucket];
  return new Date(Math.floor(t.getTime() / size) * size);
}

/**
 * [from, to): `to` is the end of the bucket holding `now` (the current, partial bucket is shown),
 * `from` is exactly `bucketCount` buckets earlier.
 */
export function rangeWindow(now: Date, range: MetricRange, bucket: MetricBucketSize): { from: Date; to: Date } {
  const to = new Date(bucketStart(now, bucket).getTime() + BUCKET_MS[bucket]);
  return { from: new Date(to.getTime() - bucketCount(range, bucket) * BUCKET_MS[bucket]), to };
}

export function bucketStarts(from: Date, to: Date, bucket: MetricBucketSize): Date[] {
  const out: Date[] = [];
  for (let t = bucketStart(from, bucket).getTime(); t < to.getTime(); t += BUCKET_MS[bucket]) out.push(new Date(t));
  return out;
}

export interface SummedPoint {
  bucket: Date;
  name: string;
  value: number;
}

/** One row per bucket: `{ t, <name>: value, … }`, with 0 for every name in a bucket without points. */
export function chartRows(
  points: readonly SummedPoint[],
  window: { from: Date; to: Date },
  bucket: MetricBucketSize,
  names: readonly string[],
): Array<{ t: number } & Record<string, number>> {
  const rows = new Map<number, { t: number } & Record<string, number>>();
  for (const start of bucketStarts(window.from, window.to, bucket)) {
    const row = { t: start.getTime() } as { t: number } & Record<string, number>;
    for (const n of names) row[n] = 0;
    rows.set(start.getTime(), row);
  }
  for (const p of points) {
    if (!names.includes(p.name)) continue;
    const row = rows.get(bucketStart(p.bucket, bucket).getTime());
    if (row) row[p.name] = (row[p.name] ?? 0) + p.value;
  }
  return [...rows.values()];
}

/** Sum per name over the whole window, every name present (0 when it has no points). */
export function totalsByName(points: readonly SummedPoint[], names: readonly string[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  for (const p of points) if (p.name in out) out[p.name] = (out[p.name] ?? 0) + p.value;
  return out;
}

/** Axis label of a bucket: "14:00" for hours within a day's range, "Mar 3 14:00" otherwise, "Mar 3" for days. */
export function bucketLabel(t: number, bucket: MetricBucketSize, range: MetricRange): string {
  const d = new Date(t);
  const day = d.toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
  if (bucket === "day") return day;
  const hour = `${String(d.getUTCHours()).padStart(2, "0")}:00`;
  return range === "24h" ? hour : `${day} ${hour}`;
}
