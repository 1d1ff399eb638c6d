import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { encodeEventIdInput, stableEventId } from "./event-id.ts";

describe("stableEventId", () => {
  it("is evt_ plus 32 hex characters and deterministic", () => {
    const a = stableEventId("chg_1", "task.completed", "task_1");
    expect(a).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(stableEventId("chg_1", "task.completed", "task_1")).toBe(a);
  });

  it("pins the encoding with test vectors", () => {
    // Computed once from the documented encoding; a change here breaks deduplication of retried steps.
    expect(stableEventId("chg_1", "task.completed", "task_1")).toBe(PINNED.withTask);
    expect(stableEventId("chg_1", "change.created", null)).toBe(PINNED.noTask);
    expect(stableEventId("chg_1", "evidence.recorded", "task_1", "build")).toBe(PINNED.withKey);
  });

  it("encodes exactly as documented", () => {
    const bytes = encodeEventIdInput("ab", "c", null, "");
    const expected = Buffer.concat([
      Buffer.from("rhumbatron/event-id/v1\0"),
      Buffer.from([1, 0, 0, 0, 2]),
      Buffer.from("ab"),
      Buffer.from([1, 0, 0, 0, 1]),
      Buffer.from("c"),
      Buffer.from([0]),
      Buffer.from([1, 0, 0, 0, 0]),
    ]);
    expect(Buffer.from(bytes).equals(expected)).toBe(true);
    const digest = createHash("sha256").update(expected).digest("hex").slice(0, 32);
    expect(stableEventId("ab", "c", null, "")).toBe(`evt_${digest}`);
  });

  it("never lets two different tuples collide through concatenation or absence", () => {
    const ids = new Set([
      stableEventId("a", "bc", null),
      stableEventId("ab", "c", null),
      stableEventId("a", "b", "c"),
      stableEventId("a", "b", ""),
      stableEventId("a", "b", null),
      stableEventId("a", "b", null, ""),
      stableEventId("a", "b", "", ""),
      stableEventId("a", "b", null, "c"),
    ]);
    expect(ids.size).toBe(8);
  });
});

const PINNED = {
  withTask: "evt_f68b095ff4192dc33c9956d78e529e50",
  noTask: "evt_0d55cd784df0ff2da38b98a6d9e5d45d",
  withKey: "evt_89e3af1f1b5e5ba8a1000df72020ec77",
};
