/**
 * How the metrics page says how far the analytics projector trails (docs/metrics.md): the number
 * of the tenant's Events not yet counted and the age of the oldest, in the largest units that keep
 * it readable at a glance.
 */
export interface AnalyticsLagFigures {
  waiting: number;
  behindSeconds: number;
}

export function behindText(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 120) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function analyticsLagText(lag: AnalyticsLagFigures): string {
  if (lag.waiting === 0) return "analytics are up to date";
  const events = `${lag.waiting.toLocaleString("en-US")} ${lag.waiting === 1 ? "event" : "events"}`;
  return `${events}, ${behindText(lag.behindSeconds)} behind`;
}
