import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { ACME, callerAs, emailFor, OUTSIDER_EMAIL, seedTenants } from "../testing/fixtures.ts";

const t = useTestDatabase();
const shop = "proj_00000000-0000-4000-8000-00000000a001";
const secret = "proj_00000000-0000-4000-8000-00000000b001";
beforeAll(async () => seedTenants(t.db));

const change = (o: Record<string, unknown> = {}) => ({
  title: "Add a wishlist",
  riskTier: "medium" as const,
  tasks: [
    { key: "a", title: "Model" },
    { key: "b", title: "API", dependsOn: ["a"] },
  ],
  ...o,
});
const rows = async () => ({
  changes: await t.db.change.count(),
  tasks: await t.db.task.count(),
  outbox: await t.db.outboxRow.count(),
  queue: await t.db.queueMessage.count(),
});

describe("change.create", () => {
  it("creates a Change with its Tasks, its event and its first dispatch; a repeat returns the same Change", async () => {
    const member = callerAs(t.db, emailFor("member"));
    const first = await member.change.create({
      tenantId: ACME.tenantId,
      projectId: shop,
      clientRequestId: "r-1",
      change: change(),
    });
    expect(first).toMatchObject({ created: true });
    expect(first.changeId).toMatch(/^chg_/);
    const before = await rows();
    expect(
      await member.change.create({
        tenantId: ACME.tenantId,
        projectId: shop,
        clientRequestId: "r-1",
        change: change({ title: "other" }),
      }),
    ).toEqual({
      changeId: first.changeId,
      created: false,
    });
    expect(await rows()).toEqual(before);
    const got = await member.change.get({ tenantId: ACME.tenantId, changeId: first.changeId });
    expect(got.tasks.map((x) => [x.key, x.state, x.dependencies])).toEqual([
      ["a", "pending", []],
      ["b", "pending", ["a"]],
    ]);
    expect(await t.db.outboxRow.count({ where: { eventType: "change.created" } })).toBe(1);
    expect(await t.db.queueMessage.count({ where: { commandType: "change.dispatch" } })).toBe(1);
    const listed = await callerAs(t.db, emailFor("viewer")).change.list({ tenantId: ACME.tenantId, projectId: shop });
    expect(listed.map((c) => [c.title, c.status, c.tasksByState])).toEqual([
      ["Add a wishlist", "open", { pending: 2 }],
    ]);
    expect((await member.task.list({ tenantId: ACME.tenantId, changeId: first.changeId })).map((x) => x.key)).toEqual([
      "a",
      "b",
    ]);
  });

  it.each([
    [
      "a cycle",
      {
        projectId: shop,
        change: change({
          tasks: [
            { key: "a", title: "A", dependsOn: ["b"] },
            { key: "b", title: "B", dependsOn: ["a"] },
          ],
        }),
      },
      "BAD_REQUEST",
      /cycle: a -> b -> a/,
    ],
    [
      "a dangling dependency",
      { projectId: shop, change: change({ tasks: [{ key: "a", title: "A", dependsOn: ["zz"] }] }) },
      "BAD_REQUEST",
      /not in the Work Graph/,
    ],
    ["an over-long title", { projectId: shop, change: change({ title: "x".repeat(201) }) }, "BAD_REQUEST", /title/],
    ["an unknown project", { projectId: "proj_nope", change: change() }, "NOT_FOUND", /not found/],
    ["another tenant's project", { projectId: secret, change: change() }, "NOT_FOUND", /not found/],
  ])("rejects %s with a typed error and writes nothing", async (_n, input, code, message) => {
    const before = await rows();
    const err = await callerAs(t.db, emailFor("member"))
      .change.create({ tenantId: ACME.tenantId, clientRequestId: `bad-${_n}`, ...input })
      .catch((e: unknown) => e as { code: string; message: string });
    expect(err).toMatchObject({ code });
    expect((err as { message: string }).message).toMatch(message);
    expect(await rows()).toEqual(before);
  });

  it("refuses a viewer and a caller from another tenant", async () => {
    const before = await rows();
    await expect(
      callerAs(t.db, emailFor("viewer")).change.create({
        tenantId: ACME.tenantId,
        projectId: shop,
        clientRequestId: "v",
        change: change(),
      }),
    ).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(
      callerAs(t.db, OUTSIDER_EMAIL).change.create({
        tenantId: ACME.tenantId,
        projectId: shop,
        clientRequestId: "o",
        change: change(),
      }),
    ).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    expect(await rows()).toEqual(before);
  });
});

describe("change.cancel and reads across tenants", () => {
  it("cancels an open Change, blocking its waiting Tasks; other tenants get NOT_FOUND or FORBIDDEN", async () => {
    const member = callerAs(t.db, emailFor("member"));
    const { changeId } = await member.change.create({
      tenantId: ACME.tenantId,
      projectId: shop,
      clientRequestId: "c-1",
      change: change(),
    });
    await expect(
      callerAs(t.db, OUTSIDER_EMAIL).change.get({ tenantId: ACME.tenantId, changeId }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(callerAs(t.db, OUTSIDER_EMAIL).change.get({ tenantId: "ten_other", changeId })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(
      callerAs(t.db, OUTSIDER_EMAIL).change.cancel({ tenantId: "ten_other", changeId, reason: "x" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(member.change.cancel({ tenantId: ACME.tenantId, changeId, reason: "" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    expect(await member.change.cancel({ tenantId: ACME.tenantId, changeId, reason: "not needed" })).toEqual({
      cancelled: true,
      candidates: [],
    });
    const got = await member.change.get({ tenantId: ACME.tenantId, changeId });
    expect(got.status).toBe("cancelled");
    expect(got.tasks.map((x) => [x.state, x.blockedLimit])).toEqual([
      ["blocked", "cancelled"],
      ["blocked", "cancelled"],
    ]);
    // A repeat answers the same result and writes nothing more.
    const events = await t.db.outboxRow.count();
    expect(await member.change.cancel({ tenantId: ACME.tenantId, changeId, reason: "again" })).toEqual({
      cancelled: true,
      candidates: [],
    });
    expect(await t.db.outboxRow.count()).toBe(events);
  });
});
