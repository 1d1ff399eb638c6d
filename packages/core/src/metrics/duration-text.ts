import { behindText } from "./analytics-lag.ts";

/**
 * A duration as the metrics page writes it: "850 ms" under a second, then the lag line's units
 * ("42 s", "8 min 5 s", "3 h 1 min"), and days past two days ("3 d 4 h"). null: nothing measured.
 */
export function durationText(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return "—";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 48 * 3600) return behindText(seconds);
  const h = Math.floor(seconds / 3600);
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** A share as a percentage with one decimal ("12.5%"); null (nothing to divide) is "—". */
export function percentText(share: number | null): string {
  if (share === null || !Number.isFinite(share)) return "—";
  return `${(Math.round(share * 1000) / 10).toFixed(1)}%`;
}
