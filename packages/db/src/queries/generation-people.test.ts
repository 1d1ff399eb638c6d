import { beforeAll, describe, expect, it } from "vitest";
import { testEvent, useTestDatabase } from "../testing/index.ts";
import { getProjectOverview } from "./project-overview.ts";

const t = useTestDatabase();
const TENANT = "ten_people";
const SHOP = "proj_people_shop";
const when = (g: number) => new Date(Date.UTC(2026, 2, 10, 9 + g));

/** A promoted generation as promotion records it: the row, and artifact.promoted with its actor. */
async function promoted(generation: number, actor: { kind: "user" | "system"; id: string }, approver?: string) {
  const changeId = `chg_g${generation}`;
  const candidateId = `cand_g${generation}`;
  await t.db.change.create({
    data: { id: changeId, projectId: SHOP, title: `Change ${generation}`, riskTier: "low", clientRequestId: changeId },
  });
  await t.db.candidate.create({
    data: {
      id: candidateId,
      projectId: SHOP,
      changeId,
      compositionKey: candidateId,
      baseGeneration: generation - 1,
      baseCommit: "c",
      status: "promoted",
    },
  });
  if (approver) {
    await t.db.approval.create({
      data: { candidateId, decision: "granted", treeHash: `t${generation}`, decidedBy: approver },
    });
  }
  await t.db.canonicalGeneration.create({
    data: {
      projectId: SHOP,
      generation,
      commit: `c${generation}`,
      tree: `t${generation}`,
      candidateId,
      createdAt: when(generation),
    },
  });
  const event = testEvent("artifact.promoted", {
    projectId: SHOP,
    tenantId: TENANT,
    changeId,
    at: when(generation),
    payload: { candidateId, generation, treeHash: `t${generation}`, commit: `c${generation}` },
  });
  await t.db.outboxRow.create({
    data: {
      eventId: event.eventId,
      projectId: SHOP,
      projectSeq: BigInt(generation),
      streamIndex: 0,
      eventType: event.eventType,
      envelope: JSON.parse(JSON.stringify({ ...event, actor })),
    },
  });
}

beforeAll(async () => {
  await t.db.tenant.create({ data: { id: TENANT, slug: "people", name: "People" } });
  await t.db.user.createMany({
    data: [
      { id: "usr_ada", email: "ada@people.test", name: "Ada Lovelace" },
      { id: "usr_grace", email: "grace@people.test", name: "Grace Hopper" },
    ],
  });
  await t.db.project.create({ data: { id: SHOP, tenantId: TENANT, name: "shop", status: "active" } });
  await t.db.canonicalGeneration.create({ data: { projectId: SHOP, generation: 0, commit: "c0", tree: "t0" } });
  await promoted(1, { kind: "user", id: "usr_ada" }, "usr_grace");
  await promoted(2, { kind: "system", id: "landing-queue" }, "usr_ada");
  await promoted(3, { kind: "user", id: "usr_gone" });
});

describe("the generation timeline's people", () => {
  it("names who promoted each generation and who approved its tree, never their IDs", async () => {
    const { generations } = await getProjectOverview(t.db, { tenantId: TENANT, projectId: SHOP });
    expect(generations.map((g) => [g.generation, g.promotedBy, g.approvedBy])).toEqual([
      [0, null, null],
      [1, { kind: "user", name: "Ada Lovelace" }, "Grace Hopper"],
      [2, { kind: "system", name: "the landing queue" }, "Ada Lovelace"],
      [3, { kind: "user", name: "a removed user" }, null],
    ]);
    expect(JSON.stringify(generations.map((g) => [g.promotedBy, g.approvedBy]))).not.toMatch(/usr_|landing-queue/);
  });
});
