import { describe, expect, it } from "vitest";
import { analyticsLagText } from "./analytics-lag.ts";

describe("analyticsLagText", () => {
  it("says up to date when nothing waits, else how many Events and how far behind", () => {
    expect(analyticsLagText({ waiting: 0, behindSeconds: 0 })).toBe("analytics are up to date");
    expect(analyticsLagText({ waiting: 1, behindSeconds: 4 })).toBe("1 event, 4 s behind");
    expect(analyticsLagText({ waiting: 250, behindSeconds: 119 })).toBe("250 events, 119 s behind");
    expect(analyticsLagText({ waiting: 1200, behindSeconds: 8 * 60 + 5 })).toBe("1,200 events, 8 min 5 s behind");
    expect(analyticsLagText({ waiting: 3, behindSeconds: 3 * 3600 + 61 })).toBe("3 events, 3 h 1 min behind");
  });
});
