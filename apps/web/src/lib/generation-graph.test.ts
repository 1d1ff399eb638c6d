import { describe, expect, it } from "vitest";
import { generationRows } from "./generation-graph.ts";

const cand = (n: number) => `cand_${n.toString(16).padStart(8, "0")}${"0".repeat(24)}`;

describe("generationRows", () => {
  const rows = generationRows(
    [
      { generation: 0, candidateId: null, commit: "a".repeat(40), createdAt: new Date("2026-03-01T08:00:00Z") },
      {
        generation: 1,
        candidateId: cand(1),
        changeId: "chg_1",
        changeTitle: "Add a wishlist page",
        commit: "b".repeat(40),
        createdAt: new Date("2026-03-10T14:25:31Z"),
        promotedBy: { kind: "user", name: "Ada Lovelace" },
        approvedBy: "Grace Hopper",
      },
      {
        generation: 2,
        candidateId: cand(2),
        changeId: "chg_2",
        changeTitle: "Fix the cart total",
        commit: "c".repeat(40),
        createdAt: new Date("2026-03-10T15:00:00Z"),
        promotedBy: { kind: "system", name: "the landing queue" },
        approvedBy: null,
      },
    ],
    2,
  );

  it("lists generation, Change, promoted by, time and commit, newest first, each title whole", () => {
    expect(rows.map((r) => [r.label, r.change, r.promotedBy, r.approvedBy, r.time, r.shortCommit, r.current])).toEqual([
      ["S2", "Fix the cart total", "the landing queue", null, "2026-03-10 15:00 UTC", "cccccccccc", true],
      ["S1", "Add a wishlist page", "Ada Lovelace", "Grace Hopper", "2026-03-10 14:25 UTC", "bbbbbbbbbb", false],
      ["S0", "the project template", "provisioning", null, "2026-03-01 08:00 UTC", "aaaaaaaaaa", false],
    ]);
    expect(rows[1]).toMatchObject({ changeId: "chg_1", candidateId: cand(1), at: "2026-03-10T14:25:31.000Z" });
    const long = "Answer the slow checkout page within two hundred milliseconds, every time";
    expect(generationRows([{ generation: 1, candidateId: cand(1), changeTitle: long }], 1)[0]?.change).toBe(long);
  });

  it("places each row on the one line of generations: it starts at the newest and ends at the oldest", () => {
    expect(rows.map((r) => [r.label, r.rail])).toEqual([
      ["S2", { newest: true, oldest: false }],
      ["S1", { newest: false, oldest: false }],
      ["S0", { newest: false, oldest: true }],
    ]);
    expect(generationRows([{ generation: 0, candidateId: null }], 0)[0]?.rail).toEqual({ newest: true, oldest: true });
  });

  it("names people, never their IDs", () => {
    const shown = rows.flatMap((r) => [r.change, r.promotedBy, r.approvedBy ?? ""]).join(" ");
    expect(shown).not.toMatch(/usr_|landing-queue/);
    expect(generationRows([{ generation: 4, candidateId: cand(4) }], 4)[0]?.promotedBy).toBe("not recorded");
  });
});
