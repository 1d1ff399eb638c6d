import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CHECK_DURATION_SERIES,
  checkDurationRows,
  durationUnit,
  eventSeries,
  LANDING_SERIES,
  landingRows,
  QUEUE_DEPTH_SERIES,
  STEP_LINE_TYPE,
  sandboxRows,
  sandboxSeries,
  timeLabel,
} from "./chart-series.ts";

const at = (iso: string) => new Date(`2026-03-${iso}Z`);
const window = { from: at("08T00:00:00"), to: at("11T00:00:00") };

describe("the metrics charts' series", () => {
  it("draws counts as bars (stacked where they add up) or step lines, never as a curve", () => {
    const all = [
      ...eventSeries(["task_completed", "task_failed"], ["change_created", "task_completed", "task_failed"]),
      ...LANDING_SERIES,
      ...QUEUE_DEPTH_SERIES,
      ...CHECK_DURATION_SERIES,
      ...sandboxSeries(["agent", "candidate"]),
    ];
    for (const s of all) expect(["bar", "step"]).toContain(s.kind);
    expect(STEP_LINE_TYPE).toBe("stepAfter");
    expect(QUEUE_DEPTH_SERIES.map((s) => s.kind)).toEqual(["step"]);
    expect(eventSeries(["task_failed"], ["change_created", "task_completed", "task_failed"])).toEqual([
      { key: "task_failed", label: "task_failed", color: "#1d4ed8", kind: "bar", stackId: "events" },
    ]);
    expect(sandboxSeries(["agent", "candidate"]).map((s) => [s.label, s.stackId])).toEqual([
      ["Agent runs", "sandbox"],
      ["Candidate checks", "sandbox"],
    ]);
  });

  it("leaves a bucket where nothing landed without a bar, rather than a zero that reads as instant", () => {
    const unit = durationUnit(36_000);
    expect(unit).toEqual({ label: "h", seconds: 3600 });
    const rows = landingRows(
      [{ bucket: at("09T00:00:00"), landed: 3, p50Seconds: 1800, p90Seconds: 36_000 }],
      window,
      "day",
      unit,
    );
    expect(rows).toEqual([
      { t: at("08T00:00:00").getTime(), landed: 0, p50: null, p90: null },
      { t: at("09T00:00:00").getTime(), landed: 3, p50: 0.5, p90: 10 },
      { t: at("10T00:00:00").getTime(), landed: 0, p50: null, p90: null },
    ]);
  });

  it("zero-fills Sandbox seconds per bucket and kind, and orders checks by their p90", () => {
    expect(
      sandboxRows([{ bucket: at("10T00:00:00"), kind: "candidate", seconds: 300 }], window, "day", [
        "agent",
        "candidate",
      ]),
    ).toEqual([
      { t: at("08T00:00:00").getTime(), agent: 0, candidate: 0 },
      { t: at("09T00:00:00").getTime(), agent: 0, candidate: 0 },
      { t: at("10T00:00:00").getTime(), agent: 0, candidate: 300 },
    ]);
    expect(
      checkDurationRows(
        [
          { checkId: "unit", p50Ms: 3000, p90Ms: 5000 },
          { checkId: "e2e", p50Ms: 50_000, p90Ms: 60_000 },
          { checkId: "lint", p50Ms: null, p90Ms: null },
        ],
        durationUnit(60),
      ),
    ).toEqual([
      { checkId: "e2e", p50: 50, p90: 60 },
      { checkId: "unit", p50: 3, p90: 5 },
    ]);
    expect(durationUnit(119)).toEqual({ label: "s", seconds: 1 });
    expect(durationUnit(120)).toEqual({ label: "min", seconds: 60 });
    expect(timeLabel(at("10T13:45:00").getTime())).toBe("Mar 10 13:45");
  });

  it("is what the metrics components draw: none of them asks recharts for a smoothed line", drawsNoSmoothedLine);
});

/** Reads every metrics component in this folder: none draws a curve, and lines are step lines in one place. */
function drawsNoSmoothedLine() {
  const dir = import.meta.dirname;
  const sources = readdirSync(dir)
    .filter((f) => f.endsWith(".tsx"))
    .map((f) => readFileSync(join(dir, f), "utf8"));
  expect(sources.length).toBeGreaterThan(0);
  for (const source of sources) {
    expect(source).not.toMatch(/type=["'{]*(monotone|natural|basis|bump|cardinal)/);
    expect(source).not.toMatch(/<Area\b/);
  }
  // Lines are drawn in one place only, with the step type.
  const lines = sources.filter((s) => /<Line\b/.test(s));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain("type={STEP_LINE_TYPE}");
}
