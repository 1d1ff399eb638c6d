import { describe, expect, it } from "vitest";
import {
  bucketCount,
  bucketLabel,
  bucketStart,
  bucketStarts,
  chartRows,
  isAllowedCombination,
  rangeWindow,
  totalsByName,
} from "./metric-buckets.ts";

const at = (iso: string) => new Date(iso);

describe("metric buckets", () => {
  it("aligns a window to whole UTC buckets and includes the current, partial one", () => {
    const now = at("2026-03-10T14:25:00Z");
    expect(rangeWindow(now, "24h", "hour")).toEqual({
      from: at("2026-03-09T15:00:00Z"),
      to: at("2026-03-10T15:00:00Z"),
    });
    expect(rangeWindow(now, "7d", "day")).toEqual({ from: at("2026-03-04T00:00:00Z"), to: at("2026-03-11T00:00:00Z") });
    expect(bucketStarts(...(Object.values(rangeWindow(now, "24h", "hour")) as [Date, Date]), "hour")).toHaveLength(24);
    expect(bucketStart(at("2026-03-10T23:59:59.999Z"), "day")).toEqual(at("2026-03-10T00:00:00Z"));
  });

  it("refuses only combinations with too many buckets", () => {
    expect(bucketCount("30d", "hour")).toBe(720);
    expect(isAllowedCombination("30d", "hour")).toBe(true);
    expect(isAllowedCombination("90d", "hour")).toBe(false);
    expect(isAllowedCombination("90d", "day")).toBe(true);
  });

  it("lays summed points out one row per bucket, zero-filled, for the chosen names only", () => {
    const window = { from: at("2026-03-08T00:00:00Z"), to: at("2026-03-11T00:00:00Z") };
    const points = [
      { bucket: at("2026-03-08T00:00:00Z"), name: "task_completed", value: 3 },
      { bucket: at("2026-03-10T00:00:00Z"), name: "task_completed", value: 1 },
      { bucket: at("2026-03-10T00:00:00Z"), name: "task_failed", value: 2 },
      { bucket: at("2026-03-10T00:00:00Z"), name: "change_created", value: 9 },
      // Outside the window: dropped, not added to an edge bucket.
      { bucket: at("2026-03-11T00:00:00Z"), name: "task_failed", value: 5 },
    ];
    expect(chartRows(points, window, "day", ["task_completed", "task_failed"])).toEqual([
      { t: at("2026-03-08T00:00:00Z").getTime(), task_completed: 3, task_failed: 0 },
      { t: at("2026-03-09T00:00:00Z").getTime(), task_completed: 0, task_failed: 0 },
      { t: at("2026-03-10T00:00:00Z").getTime(), task_completed: 1, task_failed: 2 },
    ]);
    expect(totalsByName(points, ["task_completed", "task_failed", "promotion_completed"])).toEqual({
      task_completed: 4,
      task_failed: 7,
      promotion_completed: 0,
    });
  });

  it("labels buckets in UTC", () => {
    const t = at("2026-03-10T07:00:00Z").getTime();
    expect(bucketLabel(t, "hour", "24h")).toBe("07:00");
    expect(bucketLabel(t, "hour", "7d")).toBe("Mar 10 07:00");
    expect(bucketLabel(t, "day", "30d")).toBe("Mar 10");
  });
});
