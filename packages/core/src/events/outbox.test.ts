import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import { newOutboxRow, type OutboxRowState, outboxBackoffSeconds, transitionOutbox } from "./outbox.ts";

const policy = loadConfig("dev").outbox;
const t0 = new Date("2026-01-01T00:00:00Z");
const at = (s: number) => new Date(t0.getTime() + s * 1000);

describe("outbox row state machine", () => {
  it("publishes a pending row", () => {
    expect(transitionOutbox(newOutboxRow(), { kind: "sent" }, t0, policy)).toMatchObject({ state: "published" });
  });

  it("backs off 1, 2, 4 … 256 s, then fails on the 10th failed attempt, keeping last_error", () => {
    let row: OutboxRowState = newOutboxRow();
    let now = t0;
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 9; attempt++) {
      row = transitionOutbox(row, { kind: "send_failed", error: `boom ${attempt}` }, now, policy);
      expect(row.state).toBe("retry_wait");
      expect(row.attempts).toBe(attempt);
      expect(row.lastError).toBe(`boom ${attempt}`);
      const wait = ((row.nextAttemptAt?.getTime() ?? 0) - now.getTime()) / 1000;
      waits.push(wait);
      // Not due one millisecond early.
      expect(() => transitionOutbox(row, { kind: "due" }, new Date(now.getTime() + wait * 1000 - 1), policy)).toThrow();
      now = new Date(now.getTime() + wait * 1000);
      row = transitionOutbox(row, { kind: "due" }, now, policy);
      expect(row.state).toBe("pending");
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256]);
    row = transitionOutbox(row, { kind: "send_failed", error: "boom 10" }, now, policy);
    expect(row).toEqual({ state: "failed", attempts: 10, nextAttemptAt: null, lastError: "boom 10" });
  });

  it("caps the backoff at 5 minutes", () => {
    const p = { ...policy, maxAttempts: 20 };
    expect(outboxBackoffSeconds(9, p)).toBe(256);
    expect(outboxBackoffSeconds(10, p)).toBe(300);
    expect(outboxBackoffSeconds(19, p)).toBe(300);
  });

  it("fails at once when the stream has no producer binding", () => {
    expect(transitionOutbox(newOutboxRow(), { kind: "no_binding", stream: 9 }, t0, policy)).toEqual({
      state: "failed",
      attempts: 0,
      nextAttemptAt: null,
      lastError: "no producer binding for stream 09",
    });
  });

  it("refuses transitions out of final states", () => {
    const published = transitionOutbox(newOutboxRow(), { kind: "sent" }, t0, policy);
    expect(() => transitionOutbox(published, { kind: "sent" }, at(1), policy)).toThrow(/published cannot take sent/);
    const failed = transitionOutbox(newOutboxRow(), { kind: "no_binding", stream: 1 }, t0, policy);
    expect(() => transitionOutbox(failed, { kind: "due" }, at(1), policy)).toThrow();
    expect(() => transitionOutbox(newOutboxRow(), { kind: "due" }, at(1), policy)).toThrow();
  });
});
