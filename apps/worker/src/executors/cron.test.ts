import { describe, expect, it } from "vitest";
import { manualClock } from "../testing.ts";
import { CronSchedule, nextCronRun, type Timers } from "./cron.ts";

describe("nextCronRun", () => {
  it("returns the next match strictly after now, in UTC", () => {
    expect(nextCronRun("* * * * *", new Date("2030-01-01T00:00:30.000Z"))).toEqual(
      new Date("2030-01-01T00:01:00.000Z"),
    );
    // Exactly on a match: the next one, so a tick never runs twice for the same minute.
    expect(nextCronRun("* * * * *", new Date("2030-01-01T00:01:00.000Z"))).toEqual(
      new Date("2030-01-01T00:02:00.000Z"),
    );
    expect(nextCronRun("17 4 * * *", new Date("2030-01-01T05:00:00.000Z"))).toEqual(
      new Date("2030-01-02T04:17:00.000Z"),
    );
    // Day-of-month OR day-of-week, as in classic cron and Inngest: 2030-01-04 is a Friday.
    expect(nextCronRun("0 0 13 * 5", new Date("2030-01-01T00:00:00.000Z"))).toEqual(
      new Date("2030-01-04T00:00:00.000Z"),
    );
  });

  it("rejects expressions that are not five fields", () => {
    expect(() => nextCronRun("* * * * * *", new Date())).toThrow();
    expect(() => nextCronRun("every minute", new Date())).toThrow();
  });
});

/** Timers that record what was armed; the test fires them by hand after moving the clock. */
function fakeTimers(clock: ReturnType<typeof manualClock>) {
  const armed: { fn: () => void; ms: number; cleared: boolean }[] = [];
  const timers: Timers = {
    now: clock.now,
    setTimeout(fn, ms) {
      const t = { fn, ms, cleared: false };
      armed.push(t);
      return t;
    },
    clearTimeout(handle) {
      (handle as (typeof armed)[number]).cleared = true;
    },
  };
  const last = () => {
    const t = armed.at(-1);
    if (!t) throw new Error("no timer armed");
    return t;
  };
  return { timers, armed, last };
}

describe("CronSchedule", () => {
  it("arms for the next match, ticks once when due, and re-arms for the following match", () => {
    const clock = manualClock("2030-01-01T00:00:40.000Z");
    const { timers, armed, last } = fakeTimers(clock);
    let ticks = 0;
    const schedule = new CronSchedule("* * * * *", () => ticks++, timers);
    schedule.start();
    expect(last().ms).toBe(20_000);

    clock.set("2030-01-01T00:00:59.990Z"); // the timer fired early: no tick, just re-arm
    last().fn();
    expect(ticks).toBe(0);
    expect(last().ms).toBe(10);

    clock.set("2030-01-01T00:01:00.000Z");
    last().fn();
    expect(ticks).toBe(1);
    expect(last().ms).toBe(60_000);

    clock.set("2030-01-01T00:07:30.000Z"); // a stalled process: one tick, no burst of catch-up runs
    last().fn();
    expect(ticks).toBe(2);
    expect(last().ms).toBe(30_000);

    schedule.stop();
    expect(last().cleared).toBe(true);
    last().fn(); // a timer that slipped through after stop does nothing
    expect(ticks).toBe(2);
    expect(armed).toHaveLength(4);
  });

  it("splits waits longer than setTimeout allows", () => {
    const clock = manualClock("2030-01-01T00:00:00.000Z");
    const { timers, last } = fakeTimers(clock);
    let ticks = 0;
    new CronSchedule("0 0 1 1 *", () => ticks++, timers).start(); // yearly: about 365 days away
    expect(last().ms).toBe(2_147_483_647);
    clock.set("2030-01-25T20:31:23.647Z");
    last().fn();
    expect(ticks).toBe(0);
    expect(last().ms).toBeGreaterThan(0);
  });
});
