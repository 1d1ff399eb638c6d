import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { ACME, callerAs, emailFor, OTHER, OUTSIDER_EMAIL, recordingDb, seedTenants } from "../testing/fixtures.ts";
import { createContext } from "../trpc.ts";
import { createCaller } from "./_app.ts";

const t = useTestDatabase();
const shop = "proj_00000000-0000-4000-8000-00000000a001";
const secret = "proj_00000000-0000-4000-8000-00000000b001";

beforeAll(async () => {
  await seedTenants(t.db);
  const row = (projectId: string, eventId: string, state: "failed" | "published", lastError: string | null) => ({
    eventId,
    projectId,
    projectSeq: BigInt(eventId.length),
    streamIndex: 0,
    eventType: "task.failed",
    envelope: {},
    state,
    attempts: state === "failed" ? 10 : 0,
    lastError,
  });
  await t.db.outboxRow.createMany({
    data: [
      row(shop, "evt_a", "failed", "stream store unavailable"),
      row(shop, "evt_bb", "published", null),
      row(secret, "evt_ccc", "failed", "other tenant's error"),
    ],
  });
});

describe("operations.outbox", () => {
  it("lists the tenant's failed rows with last_error for an operator", async () => {
    const rows = await callerAs(t.db, emailFor("operator")).operations.outbox({
      tenantId: ACME.tenantId,
      state: "failed",
    });
    expect(rows.map((r) => [r.eventId, r.projectName, r.attempts, r.lastError])).toEqual([
      ["evt_a", "shop", 10, "stream store unavailable"],
    ]);
    expect(await callerAs(t.db, emailFor("admin")).operations.outboxCounts({ tenantId: ACME.tenantId })).toEqual({
      pending: 0,
      retry_wait: 0,
      published: 1,
      failed: 1,
    });
  });

  it("is FORBIDDEN below operator and across tenants, reading nothing", async () => {
    for (const role of ["viewer", "member", "approver"] as const) {
      const rec = recordingDb(t.db);
      const caller = createCaller(
        createContext({ db: rec.db, headers: new Headers(), localUserEmail: emailFor(role) }),
      );
      await expect(caller.operations.outbox({ tenantId: ACME.tenantId, state: "failed" })).rejects.toMatchObject({
        code: "FORBIDDEN",
      });
      expect(rec.touched).not.toContain("outboxRow");
    }
    await expect(
      callerAs(t.db, OUTSIDER_EMAIL).operations.outbox({ tenantId: ACME.tenantId, state: "failed" }),
    ).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    const mine = await callerAs(t.db, OUTSIDER_EMAIL).operations.outbox({ tenantId: OTHER.tenantId, state: "failed" });
    expect(mine.map((r) => r.eventId)).toEqual(["evt_ccc"]);
  });

  it("rejects an unknown state with BAD_REQUEST", async () => {
    await expect(
      callerAs(t.db, emailFor("operator")).operations.outbox({ tenantId: ACME.tenantId, state: "lost" as never }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});
