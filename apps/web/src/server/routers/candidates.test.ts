import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { ACME, callerAs, emailFor, OTHER, OUTSIDER_EMAIL, seedTenants } from "../testing/fixtures.ts";

const t = useTestDatabase();
const shop = "proj_00000000-0000-4000-8000-00000000a001";

beforeAll(async () => {
  await seedTenants(t.db);
  await t.db.change.create({
    data: { id: "chg_w", projectId: shop, title: "Wishlist", riskTier: "medium", clientRequestId: "w" },
  });
  await t.db.task.create({ data: { id: "task_w", changeId: "chg_w", key: "a", title: "a", state: "completed" } });
  await t.db.changeSet.create({
    data: {
      id: "cs_w",
      changeId: "chg_w",
      taskId: "task_w",
      runId: "run_w",
      agentId: "agt",
      fork: "ws-x",
      baseCommit: "c0",
      commit: "c1",
      patchRef: "source/p/patches/changesets/cs_w.patch",
    },
  });
  await t.db.candidate.create({
    data: {
      id: "cand_0123456789abcdef",
      projectId: shop,
      changeId: "chg_w",
      compositionKey: "k",
      baseGeneration: 0,
      baseCommit: "c0",
      changeSetIds: ["cs_w"],
    },
  });
});

describe("candidate.list and candidate.get", () => {
  it("show a viewer the tenant's Candidates with their ChangeSets in composition order", async () => {
    const viewer = callerAs(t.db, emailFor("viewer"));
    expect((await viewer.candidate.list({ tenantId: ACME.tenantId, projectId: shop })).map((c) => c.id)).toEqual([
      "cand_0123456789abcdef",
    ]);
    const c = await viewer.candidate.get({ tenantId: ACME.tenantId, candidateId: "cand_0123456789abcdef" });
    expect(c).toMatchObject({ status: "created", baseGeneration: 0, verification: null });
    expect(c.changeSets.map((cs) => [cs.id, cs.patchRef])).toEqual([
      ["cs_w", "source/p/patches/changesets/cs_w.patch"],
    ]);
  });

  it("hide them from other tenants", async () => {
    const outsider = callerAs(t.db, OUTSIDER_EMAIL);
    await expect(
      outsider.candidate.get({ tenantId: OTHER.tenantId, candidateId: "cand_0123456789abcdef" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(outsider.candidate.list({ tenantId: OTHER.tenantId, projectId: shop })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(outsider.candidate.list({ tenantId: ACME.tenantId, projectId: shop })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });
});
