import { describe, expect, it } from "vitest";
import { durationText, percentText } from "./duration-text.ts";
import { type LandingHistory, landingIntervals, peakDepth, queueDepthSteps } from "./landing-queue.ts";

const at = (hhmm: string) => new Date(`2026-03-10T${hhmm}:00Z`);
const history = (o: Partial<LandingHistory> & { changeId: string }): LandingHistory => ({
  createdAt: at("08:00"),
  landingSince: null,
  landedAt: null,
  cancelledAt: null,
  toggles: [],
  ...o,
});

describe("landingIntervals", () => {
  it("counts a Change created landing from its creation, until it lands", () => {
    expect(landingIntervals(history({ changeId: "a", landingSince: at("08:00"), landedAt: at("09:30") }))).toEqual([
      { changeId: "a", joined: at("08:00"), left: at("09:30") },
    ]);
  });

  it("follows the toggles: on, off, on again; a first toggle that turns landing off means it was on from creation", () => {
    const toggled = history({
      changeId: "b",
      landingSince: at("11:00"),
      toggles: [
        { at: at("11:00"), on: true },
        { at: at("10:00"), on: false },
      ],
    });
    expect(landingIntervals(toggled)).toEqual([
      { changeId: "b", joined: at("08:00"), left: at("10:00") },
      { changeId: "b", joined: at("11:00"), left: null },
    ]);
  });

  it("ends at the cancellation, and ignores a Change that never landed when ready", () => {
    const cancelled = history({
      changeId: "c",
      cancelledAt: at("12:00"),
      toggles: [{ at: at("09:00"), on: true }],
    });
    expect(landingIntervals(cancelled)).toEqual([{ changeId: "c", joined: at("09:00"), left: at("12:00") }]);
    expect(landingIntervals(history({ changeId: "d", landedAt: at("09:00") }))).toEqual([]);
  });
});

describe("queueDepthSteps", () => {
  const window = { from: at("09:00"), to: at("15:00") };
  const intervals = [
    { changeId: "a", joined: at("08:00"), left: at("10:00") }, // waiting when the window opens
    { changeId: "b", joined: at("10:00"), left: at("12:00") }, // joins as a leaves: one step, no change
    { changeId: "c", joined: at("11:00"), left: null },
    { changeId: "d", joined: at("13:30"), left: null }, // after now: not counted
    { changeId: "e", joined: at("06:00"), left: at("07:00") }, // before the window
  ];

  it("steps at every join and leave from the window's start to now, never past now", () => {
    const steps = queueDepthSteps(intervals, window, at("13:00"));
    expect(steps).toEqual([
      { t: at("09:00").getTime(), depth: 1 },
      { t: at("11:00").getTime(), depth: 2 },
      { t: at("12:00").getTime(), depth: 1 },
      { t: at("13:00").getTime(), depth: 1 },
    ]);
    expect(peakDepth(steps)).toBe(2);
  });

  it("is flat at zero when nothing waited, and empty for a window that starts after now", () => {
    expect(queueDepthSteps([], window, at("13:00"))).toEqual([
      { t: at("09:00").getTime(), depth: 0 },
      { t: at("13:00").getTime(), depth: 0 },
    ]);
    expect(queueDepthSteps(intervals, window, at("08:00"))).toEqual([]);
    expect(peakDepth([])).toBe(0);
  });
});

describe("durationText and percentText", () => {
  it("writes durations in the largest readable units and shares with one decimal", () => {
    expect(durationText(0.85)).toBe("850 ms");
    expect(durationText(42)).toBe("42 s");
    expect(durationText(8 * 60 + 5)).toBe("8 min 5 s");
    expect(durationText(3 * 3600 + 60)).toBe("3 h 1 min");
    expect(durationText(3 * 86_400 + 4 * 3600 + 59)).toBe("3 d 4 h");
    expect(durationText(null)).toBe("—");
    expect(percentText(1 / 8)).toBe("12.5%");
    expect(percentText(0)).toBe("0.0%");
    expect(percentText(null)).toBe("—");
  });
});
