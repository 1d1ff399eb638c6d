import { describe, expect, it } from "vitest";
import type { GateResult } from "../verification/gate.ts";
import {
  conflictReviewPrompt,
  judgeFindings,
  parseConflictReviewAnswer,
  reviewGaps,
  reviewOverlaps,
  withReviewGaps,
} from "./conflict-review.ts";
import { buildReviewPacket } from "./packet.ts";

const packet = buildReviewPacket("ctxp_crev_1", "t1", [
  {
    path: "src/catalog.ts",
    versions: [
      { path: "src/catalog.ts", blob: "b0", size: 5, why: "the base" },
      { path: "src/catalog.ts", blob: "b1", size: 5, why: "Task a's version" },
    ],
  },
]);

describe("parseConflictReviewAnswer", () => {
  it("reads the findings, inside a code fence too", () => {
    const answer = '```json\n{"findings":[{"severity":"blocking","message":"twice","citations":["ctx_1"]}]}\n```';
    expect(parseConflictReviewAnswer(answer, "m")).toEqual({
      status: "completed",
      model: "m",
      findings: [{ severity: "blocking", message: "twice", citations: ["ctx_1"] }],
    });
    expect(parseConflictReviewAnswer('{"findings":[]}', "m")).toEqual({
      status: "completed",
      model: "m",
      findings: [],
    });
  });

  it("fails on anything else, saying what was wrong, and repairs nothing", () => {
    const failed = (text: string) => {
      const r = parseConflictReviewAnswer(text, "m");
      return r.status === "failed" ? r.reason : `not failed: ${JSON.stringify(r)}`;
    };
    expect(failed("")).toBe("empty answer");
    expect(failed("Looks fine to me.")).toMatch(/^answer is not JSON: Looks fine/);
    expect(failed('{"findings":[{"severity":"critical","message":"x","citations":[]}]}')).toMatch(
      /findings\.0\.severity/,
    );
    expect(failed('{"findings":[{"severity":"advisory","message":"x"}]}')).toMatch(/findings\.0\.citations/);
    expect(failed('{"findings":[],"verdict":"ok"}')).toMatch(/verdict/);
    expect(failed('[{"severity":"advisory","message":"x","citations":[]}]')).toMatch(/findings shape/);
  });
});

describe("judging and the gate", () => {
  const gate: GateResult = {
    promotable: true,
    verdicts: [{ checkId: "build", satisfied: true, gap: null, evidenceId: "ev_1", detail: "satisfied", excerpt: [] }],
    gaps: [],
  };

  it("supports a finding only when it cites items of the packet, at least one", () => {
    const judged = judgeFindings(
      [
        { severity: "blocking", message: "ok", citations: ["ctx_1", "ctx_2"] },
        { severity: "blocking", message: "bad", citations: ["ctx_1", "ctx_9"] },
        { severity: "advisory", message: "none", citations: [] },
      ],
      packet,
    );
    expect(judged.map((f) => f.supported)).toEqual([true, false, false]);
  });

  it("makes a gap of a supported blocking finding only, with its message and citations", () => {
    const findings = [
      {
        id: "f1",
        severity: "blocking",
        message: "x is declared twice",
        citations: ["ctx_1", "ctx_2"],
        supported: true,
      },
      { id: "f2", severity: "blocking", message: "made up", citations: ["ctx_9"], supported: false },
      { id: "f3", severity: "advisory", message: "naming", citations: ["ctx_1"], supported: true },
    ];
    expect(reviewGaps(findings)).toEqual([
      {
        checkId: "conflict-review",
        satisfied: false,
        gap: "blocking_finding",
        evidenceId: "f1",
        detail: "x is declared twice (cites ctx_1, ctx_2)",
        excerpt: [],
      },
    ]);
    const blocked = withReviewGaps(gate, findings);
    expect(blocked.promotable).toBe(false);
    expect(blocked.gaps.map((g) => g.evidenceId)).toEqual(["f1"]);
    // Unsupported and advisory findings change nothing.
    expect(withReviewGaps(gate, findings.slice(1))).toBe(gate);
  });

  it("asks with every item's ID, path and text", () => {
    const [system, user] = conflictReviewPrompt({
      candidateId: "cand_1",
      changeTitle: "Rename",
      tasks: [{ key: "a", title: "Rename mug", changeSetId: "cs_1" }],
      packet,
      contents: { ctx_1: "base text", ctx_2: "a text" },
    });
    expect(system?.content).toContain('"citations":["ctx_1"]');
    expect(user?.content).toContain('=== ctx_1 "src/catalog.ts": the base (blob b0, 5 bytes) ===\nbase text');
    expect(user?.content).toContain('=== ctx_2 "src/catalog.ts": Task a\'s version (blob b1, 5 bytes) ===\na text');
  });
});

describe("reviewOverlaps", () => {
  const cs = (id: string, paths: string[], builtOn: string[] = []) => ({
    id,
    files: paths.map((path) => ({ path, kind: "modify" as const })),
    builtOn,
  });
  it("is every file two ChangeSets changed when neither builds on the other", () => {
    expect(
      reviewOverlaps([
        cs("a", ["src/x.ts", "src/y.ts", "src/z.ts"]),
        cs("b", ["src/x.ts", "src/w.ts"]),
        cs("c", ["src/y.ts"], ["a"]),
        cs("d", ["src/w.ts"], ["b"]),
      ]),
    ).toEqual([{ path: "src/x.ts", changeSets: ["a", "b"] }]);
    expect(reviewOverlaps([cs("a", ["src/x.ts"]), cs("b", ["src/y.ts"])])).toEqual([]);
  });
});
