import { describe, expect, it } from "vitest";
import {
  decideRestart,
  describeExit,
  giveUpLine,
  NO_RESTARTS,
  RESTART_POLICY,
  type RestartDecision,
  type RestartHistory,
  restartLine,
} from "./restart-policy.ts";

/** Crashes at the given times (ms), each right after its start: the decisions, in order. */
function crashesAt(times: number[], ranForMs = 100): RestartDecision[] {
  let history: RestartHistory = NO_RESTARTS;
  return times.map((at) => {
    const d = decideRestart(history, { at, ranForMs });
    if (d.restart) history = d.history;
    return d;
  });
}

const delays = (ds: RestartDecision[]) => ds.map((d) => (d.restart ? d.delayMs : "give up"));

describe("restart policy: 1 s doubling to 30 s, at most 5 restarts within any 60 s", () => {
  it("doubles the delay for a process that keeps crashing, and gives up at the sixth crash within 60 s", () => {
    // Each crash comes as soon as the previous restart happened.
    expect(delays(crashesAt([0, 1_000, 3_000, 7_000, 15_000, 31_000]))).toEqual([
      1_000,
      2_000,
      4_000,
      8_000,
      16_000,
      "give up",
    ]);
  });

  it("caps the delay at 30 s for crashes spaced out enough to stay under the limit", () => {
    // A crash every 20 s: never more than 3 restarts within 60 s, so it never gives up.
    const ds = crashesAt(Array.from({ length: 8 }, (_, i) => i * 20_000));
    expect(delays(ds)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    expect(ds.map((d) => d.restartsInWindow)).toEqual([1, 2, 3, 3, 3, 3, 3, 3]);
  });

  it("counts restarts in a rolling window: the limit frees up 60 s after the oldest one", () => {
    const five = [0, 1_000, 2_000, 3_000, 4_000];
    expect(crashesAt([...five, 59_999]).at(-1)?.restart).toBe(false);
    const sixth = crashesAt([...five, 60_000]).at(-1);
    expect(sixth).toMatchObject({ restart: true, restartsInWindow: 5 });
  });

  it("starts a new streak (1 s again) for a process that ran a minute before it crashed", () => {
    let history: RestartHistory = NO_RESTARTS;
    for (const at of [0, 1_000, 3_000]) {
      const d = decideRestart(history, { at, ranForMs: 10 });
      if (d.restart) history = d.history;
    }
    const quick = decideRestart(history, { at: 5_000, ranForMs: 1_000 });
    const stable = decideRestart(history, { at: 200_000, ranForMs: RESTART_POLICY.stableAfterMs });
    expect(quick).toMatchObject({ restart: true, delayMs: 8_000 });
    expect(stable).toMatchObject({ restart: true, delayMs: 1_000, restartsInWindow: 1 });
  });

  it("says how a process ended and what happens next, in one line", () => {
    expect(describeExit({ code: 1, signal: null })).toBe("exit code 1");
    expect(describeExit({ code: null, signal: "SIGKILL" })).toBe("killed by SIGKILL");
    expect(describeExit({ code: 137, signal: null })).toBe("exit code 137 (SIGKILL)");
    expect(describeExit({ code: 1, signal: null, error: "spawn tsx ENOENT" })).toBe(
      "could not start: spawn tsx ENOENT",
    );
    expect(restartLine("worker", { code: null, signal: "SIGKILL" }, { delayMs: 2_000, restartsInWindow: 2 })).toBe(
      "worker crashed: killed by SIGKILL; restarting it in 2 s (restart 2 of at most 5 within 60 s)",
    );
    expect(giveUpLine("web", { code: 1, signal: null })).toBe(
      "web crashed again: exit code 1; it was restarted 5 times within 60 s already, so it is not restarted again",
    );
  });
});
