import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { ACME, callerAs, emailFor, OTHER, OUTSIDER_EMAIL, recordingDb, seedTenants } from "../testing/fixtures.ts";
import { testServices } from "../testing/services.ts";
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
        createContext({ db: rec.db, headers: new Headers(), localUserEmail: emailFor(role), services: testServices() }),
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

describe("operations dead letters", () => {
  async function seedDeadLetter(id: string, projectId: string) {
    await t.db.deadLetter.create({
      data: {
        id,
        kind: "command",
        commandId: id.replace("dl_", ""),
        consumer: "rhumbatron-event-router",
        originQueue: "integration",
        projectId,
        reason: "boom",
        attempts: 1,
        payload: {
          commandId: id.replace("dl_", ""),
          commandType: "project.provision",
          projectId,
          changeId: null,
          taskId: null,
          attempt: 0,
          createdAt: "2026-01-01T00:00:00.000Z",
          deadline: null,
          payload: {},
        },
      },
    });
  }

  it("lets an operator retry once and dismiss with a reason; others get FORBIDDEN and nothing is sent", async () => {
    await seedDeadLetter("dl_cmd_web1", shop);
    await seedDeadLetter("dl_cmd_web2", shop);
    await seedDeadLetter("dl_cmd_web3", secret);
    const op = callerAs(t.db, emailFor("operator"));
    const open = await op.operations.deadLetters({ tenantId: ACME.tenantId });
    expect(open.map((d) => d.id).sort()).toEqual(["dl_cmd_web1", "dl_cmd_web2"]);

    for (const role of ["viewer", "member", "approver"] as const) {
      const caller = callerAs(t.db, emailFor(role));
      await expect(
        caller.operations.retryDeadLetter({ tenantId: ACME.tenantId, deadLetterId: "dl_cmd_web1" }),
      ).rejects.toMatchObject({ code: "FORBIDDEN" });
      await expect(
        caller.operations.dismissDeadLetter({ tenantId: ACME.tenantId, deadLetterId: "dl_cmd_web1", reason: "no" }),
      ).rejects.toMatchObject({ code: "FORBIDDEN" });
    }
    expect(await t.db.queueMessage.count()).toBe(0);

    expect(await op.operations.retryDeadLetter({ tenantId: ACME.tenantId, deadLetterId: "dl_cmd_web1" })).toEqual({
      queue: "integration",
      commandId: "cmd_web1",
    });
    await expect(
      op.operations.retryDeadLetter({ tenantId: ACME.tenantId, deadLetterId: "dl_cmd_web1" }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    expect(await t.db.queueMessage.count({ where: { commandId: "cmd_web1" } })).toBe(1);
    expect(await t.db.deadLetter.findUniqueOrThrow({ where: { id: "dl_cmd_web1" } })).toMatchObject({
      status: "retried",
      resolvedBy: "usr_acme_operator",
    });

    await expect(
      op.operations.dismissDeadLetter({ tenantId: ACME.tenantId, deadLetterId: "dl_cmd_web2", reason: "" }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(
      await op.operations.dismissDeadLetter({
        tenantId: ACME.tenantId,
        deadLetterId: "dl_cmd_web2",
        reason: "duplicate work",
      }),
    ).toEqual({ dismissed: true });
    expect(await t.db.deadLetter.findUniqueOrThrow({ where: { id: "dl_cmd_web2" } })).toMatchObject({
      status: "dismissed",
      resolveNote: "duplicate work",
    });

    // Another tenant's dead letter is not found, and nothing changes.
    await expect(
      op.operations.retryDeadLetter({ tenantId: ACME.tenantId, deadLetterId: "dl_cmd_web3" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await t.db.deadLetter.findUniqueOrThrow({ where: { id: "dl_cmd_web3" } })).toMatchObject({ status: "open" });
    const queues = await op.operations.queues({ tenantId: ACME.tenantId });
    expect(queues).toEqual([{ queue: "integration", depth: 1, in_flight: 0, delayed: 0 }]);
  });
});
