import { GAP_KINDS, type PlannedCheck } from "@rhumbatron/core";
import { describe, expect, it } from "vitest";
import {
  ageLabel,
  candidateTone,
  checkRows,
  checkTone,
  durationAgainstTimeout,
  evidenceTone,
  findingStyle,
  GAP_STYLES,
  gapStyle,
  isFinalStatus,
  reviewStatusBadge,
  TONE_CLASSES,
  unrecordedCheck,
} from "./candidate-view.ts";

const GREEN = /emerald|green/;

describe("gap styling", () => {
  it("gives every gap kind a non-passing tone with a label and a meaning, never a green class", () => {
    for (const kind of GAP_KINDS) {
      const style = gapStyle(kind);
      expect(style.tone, kind).not.toBe("pass");
      expect(TONE_CLASSES[style.tone], kind).not.toMatch(GREEN);
      expect(style.label.length, kind).toBeGreaterThan(0);
      expect(style.meaning.length, kind).toBeGreaterThan(0);
    }
    expect(Object.keys(GAP_STYLES).sort()).toEqual([...GAP_KINDS].sort());
  });

  it("shows an unknown gap kind from a newer worker as a failure, not as passing", () => {
    expect(gapStyle("brand_new_gap")).toMatchObject({ tone: "fail", label: "brand_new_gap" });
  });

  it("never colours a check with a gap green, even when its record says pass", () => {
    for (const gap of GAP_KINDS) {
      for (const evidenceStatus of ["pass", "fail", "error", "skipped", null]) {
        expect(checkTone({ gap, satisfied: false, evidenceStatus }), `${gap}/${evidenceStatus}`).not.toBe("pass");
      }
    }
    // A verdict that is not satisfied but names no gap is still a gap (treated as missing).
    expect(checkTone({ gap: null, satisfied: false, evidenceStatus: "pass" })).toBe("warn");
  });

  it("colours a satisfied check by its record, and a record under a gap never green", () => {
    expect(checkTone({ gap: null, satisfied: true, evidenceStatus: "pass" })).toBe("pass");
    expect(evidenceTone("pass", false)).toBe("pass");
    expect(evidenceTone("pass", true)).toBe("warn");
    expect(evidenceTone("fail", true)).toBe("fail");
    expect(evidenceTone("skipped", false)).toBe("warn");
  });
});

describe("candidate status", () => {
  it("keeps refreshing until a final status and colours each status", () => {
    expect(["created", "verifying"].map(isFinalStatus)).toEqual([false, false]);
    expect(["verified", "rejected", "stale", "promoted"].map(isFinalStatus)).toEqual([true, true, true, true]);
    expect(candidateTone("verifying")).toBe("pending");
    expect(candidateTone("rejected")).toBe("fail");
    expect(candidateTone("verified")).toBe("pass");
    expect(candidateTone("something-else")).toBe("neutral");
  });

  it("states duration against the timeout and flags a run over it", () => {
    expect(durationAgainstTimeout(1_200, 120)).toEqual({ label: "1.2 s of 120 s", share: 0.01, over: false });
    expect(durationAgainstTimeout(130_000, 120)).toMatchObject({ label: "2 min 10 s of 120 s", share: 1, over: true });
    expect(durationAgainstTimeout(450, 5).label).toBe("450 ms of 5 s");
  });
});

describe("a planned check with no Evidence", () => {
  it("is running while the Candidate verifies, and stopped (neither passed nor failed) once it went stale or was cancelled", () => {
    for (const status of ["created", "verifying"]) {
      expect(unrecordedCheck(status), status).toMatchObject({ kind: "running", tone: "pending" });
    }
    for (const status of ["stale", "cancelled"]) {
      const stopped = unrecordedCheck(status);
      expect(stopped, status).toMatchObject({ kind: "stopped", tone: "neutral", label: "stopped" });
      expect(stopped?.meaning, status).toMatch(/nothing is recorded for it\. It neither passed nor failed\.$/);
    }
    // A finished verification with a check that has no record: the gate's gap says it.
    for (const status of ["verified", "rejected", "promoted"]) expect(unrecordedCheck(status), status).toBeNull();
  });
});

describe("checkRows", () => {
  const check = (id: string): PlannedCheck =>
    ({ id, kind: "build", timeoutSeconds: 60, argv: null, reason: "r" }) as PlannedCheck;
  const ev = (id: string, checkId: string, at: number) => ({ id, checkId, status: "pass", completedAt: new Date(at) });

  it("lists planned checks in plan order with every record newest first, then records of unplanned checks", () => {
    const rows = checkRows(
      [check("unit"), check("build")],
      [{ checkId: "build", satisfied: true, gap: null, evidenceId: "e2", detail: "satisfied", excerpt: [] }],
      [ev("e1", "build", 1), ev("e2", "build", 2), ev("e3", "extra", 3)],
    );
    expect(rows.map((r) => [r.checkId, r.evidence.map((e) => e.id), r.verdict?.satisfied ?? null])).toEqual([
      ["unit", [], null],
      ["build", ["e2", "e1"], true],
      ["extra", ["e3"], null],
    ]);
    expect(rows[2]?.check).toBeNull();
  });
});

describe("conflict-review findings", () => {
  it("shows a supported blocking finding as failing, an advisory as a warning, an unsupported one as neither", () => {
    expect(findingStyle({ severity: "blocking", supported: true })).toMatchObject({ tone: "fail", label: "Blocking" });
    expect(findingStyle({ severity: "advisory", supported: true })).toMatchObject({ tone: "warn", label: "Advisory" });
    for (const severity of ["blocking", "advisory"]) {
      const style = findingStyle({ severity, supported: false });
      expect(style).toMatchObject({ tone: "neutral", label: `Unsupported ${severity}` });
      expect(style.meaning).toMatch(/changes nothing/);
    }
  });

  it("never shows a finding or a failed or skipped review green", () => {
    for (const severity of ["blocking", "advisory"]) {
      for (const supported of [true, false]) expect(findingStyle({ severity, supported }).tone).not.toBe("pass");
    }
    expect(reviewStatusBadge("failed")).toEqual({ tone: "warn", text: "review failed" });
    expect(reviewStatusBadge("skipped").tone).not.toBe("pass");
  });
});

describe("ageLabel", () => {
  const now = new Date("2026-03-10T12:00:00Z");
  const before = (ms: number) => new Date(now.getTime() - ms);
  it("says how long ago in the largest whole unit, and just now under a minute (or for a clock ahead)", () => {
    expect(ageLabel(before(59_000), now)).toBe("just now");
    expect(ageLabel(before(-5_000), now)).toBe("just now");
    expect(ageLabel(before(60_000), now)).toBe("1 min ago");
    expect(ageLabel(before(59 * 60_000), now)).toBe("59 min ago");
    expect(ageLabel(before(3 * 3_600_000 + 59 * 60_000), now)).toBe("3 h ago");
    expect(ageLabel(before(49 * 3_600_000), now)).toBe("2 d ago");
  });
});
