import { type EventEnvelope, loadConfig, streamIndex } from "@rhumbatron/core";
import type { Nudger } from "@rhumbatron/runtime";
import {
  appendToOutbox,
  consumeOnce,
  consumeQueue,
  postgresStreamSink,
  publishProject,
  putOnQueue,
} from "@rhumbatron/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import type { Role } from "../generated/prisma/enums.ts";
import { deadLetterHandler } from "../queues/dead-letters.ts";
import { testEvent, useTestDatabase } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import { countUnread, listNotifications, markNotificationsRead } from "./inbox.ts";
import { NOTIFIER, notifierSubscription, notifyOf } from "./notifier.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
const noNudge: Nudger = { nudge: async () => {} };
const now = new Date("2026-06-01T10:00:00Z");
const deps = { config, now: () => now, owner: "notifier-test" };
const TENANT = "ten_n";
const PROJECT = "proj_n";
const ROLES: Role[] = ["viewer", "member", "approver", "operator", "admin"];
const person = (role: Role) => `usr_n_${role}`;
const REQUESTER = "usr_n_requester";

beforeAll(async () => {
  await t.db.tenant.createMany({
    data: [
      { id: TENANT, slug: "n", name: "N" },
      { id: "ten_elsewhere", slug: "elsewhere", name: "Elsewhere" },
    ],
  });
  for (const role of ROLES) {
    await t.db.user.create({ data: { id: person(role), email: `${role}@n.test`, name: `N ${role}` } });
    await t.db.membership.create({ data: { tenantId: TENANT, userId: person(role), role } });
  }
  await t.db.user.create({ data: { id: REQUESTER, email: "ada@n.test", name: "Ada Lovelace" } });
  await t.db.membership.create({ data: { tenantId: TENANT, userId: REQUESTER, role: "member" } });
  // An admin of another tenant hears nothing of this one.
  await t.db.user.create({ data: { id: "usr_elsewhere", email: "boss@elsewhere.test", name: "Boss" } });
  await t.db.membership.create({ data: { tenantId: "ten_elsewhere", userId: "usr_elsewhere", role: "admin" } });
  await t.db.project.create({ data: { id: PROJECT, tenantId: TENANT, name: "shop", status: "active" } });
});

async function change(id: string, title: string) {
  await t.db.change.create({
    data: { id, projectId: PROJECT, title, riskTier: "high", clientRequestId: id, createdBy: REQUESTER },
  });
  return id;
}

/** Writes the Events through the outbox, publishes them, and runs the notifier over the stream. */
async function notify(events: EventEnvelope[]) {
  await withTransaction(t.db, (ctx) => appendToOutbox(ctx, events, { config, nudger: noNudge }));
  await publishProject(t.db, PROJECT, { config, sink: postgresStreamSink, nudger: noNudge, now: () => now });
  const stream = streamIndex(PROJECT, config.streams.count);
  return consumeOnce(t.db, notifierSubscription(), stream, deps);
}

const ev = testEvent;
const at = { projectId: PROJECT, tenantId: TENANT };

/**
 * Dead-letters the same landing Command and lets the dead-letter consumer record it. Always the
 * same Command, so that a second call is a redelivery of one dead letter, not a new one.
 */
async function deadLetterPoisonLanding() {
  const qdeps = { config, nudger: noNudge, now: () => now, owner: "dlq-test" };
  await withTransaction(t.db, (ctx) =>
    putOnQueue(
      ctx,
      "dead-letter",
      {
        commandId: "cmd_land_poison",
        commandType: "candidate.land",
        projectId: PROJECT,
        changeId: null,
        taskId: null,
        attempt: 0,
        createdAt: now.toISOString(),
        deadline: null,
        payload: { candidateId: "cand_x" },
      },
      qdeps,
      { originQueue: "integration", lastError: "landing failed: boom" },
    ),
  );
  await consumeQueue(t.db, "dead-letter", [deadLetterHandler(qdeps)], qdeps);
}

describe("the notifier", () => {
  it("asks every approver, operator and admin of the tenant once for an approval; a replay asks nobody again", async () => {
    const changeId = await change("chg_n1", "Add a wishlist");
    const requested = ev("approval.requested", {
      ...at,
      changeId,
      payload: { candidateId: "cand_n1", treeHash: "t1" },
    });
    expect(await notify([requested])).toMatchObject({ outcome: "ack", applied: 1 });
    const rows = await t.db.notification.findMany({
      where: { eventId: requested.eventId },
      orderBy: { userId: "asc" },
    });
    expect(rows.map((r) => r.userId)).toEqual([person("admin"), person("approver"), person("operator")]);
    expect(rows[0]).toMatchObject({
      kind: "approval_requested",
      tenantId: TENANT,
      projectId: PROJECT,
      changeId,
      candidateId: "cand_n1",
      actorId: REQUESTER,
      title: "Approval waiting: “Add a wishlist”",
      readAt: null,
    });

    // The stream delivers the Event again (the cursor rewound): the consumer's dedupe applies nothing.
    await t.db.streamCursor.updateMany({ where: { subscription: NOTIFIER }, data: { committedOffset: 0 } });
    const stream = streamIndex(PROJECT, config.streams.count);
    expect(await consumeOnce(t.db, notifierSubscription(), stream, deps)).toMatchObject({ applied: 0 });
    // Even applied again past the dedupe (its processed mark lost), (Event, person) is written once.
    expect(await withTransaction(t.db, (ctx) => notifyOf(ctx, requested))).toBe(0);
    expect(await t.db.notification.count({ where: { eventId: requested.eventId } })).toBe(3);
    expect(await t.db.notification.count({ where: { userId: "usr_elsewhere" } })).toBe(0);
  });

  it("marks an approval request read for everyone once one approver answered it; other requests stay unread", async () => {
    const changeId = await change("chg_n9", "Gift cards");
    const asked = (candidateId: string) =>
      ev("approval.requested", { ...at, changeId, key: candidateId, payload: { candidateId, treeHash: "t9" } });
    await notify([asked("cand_n9"), asked("cand_n9b")]);
    const unread = (candidateId: string) =>
      t.db.notification.count({ where: { candidateId, kind: "approval_requested", readAt: null } });
    expect(await unread("cand_n9")).toBe(3);
    const granted = {
      ...ev("approval.granted", {
        ...at,
        changeId,
        payload: { candidateId: "cand_n9", treeHash: "t9", approverId: person("approver") },
      }),
      actor: { kind: "user" as const, id: person("approver") },
    };
    expect(await notify([granted])).toMatchObject({ outcome: "ack", applied: 1 });
    expect(await unread("cand_n9")).toBe(0);
    const read = await t.db.notification.findFirstOrThrow({
      where: { candidateId: "cand_n9", userId: person("admin") },
    });
    expect(read.readAt?.toISOString()).toBe(new Date(granted.timestamp).toISOString());
    // Another Candidate's request is still waiting.
    expect(await unread("cand_n9b")).toBe(3);
  });

  it("tells the Change's requester that it was rejected (by whom, why), that it conflicted, and that it landed", async () => {
    const rejectedId = await change("chg_n2", "Cheaper shipping");
    await t.db.candidate.create({
      data: {
        id: "cand_n2",
        projectId: PROJECT,
        changeId: rejectedId,
        compositionKey: "n2",
        baseGeneration: 0,
        baseCommit: "c0",
        status: "rejected",
        rejectionReason: "approval rejected: the totals are wrong",
      },
    });
    const conflictedId = await change("chg_n3", "Rename the cart");
    const landedId = await change("chg_n4", "Faster search");
    const approver = { kind: "user" as const, id: person("approver") };
    await notify([
      {
        ...ev("candidate.rejected", {
          ...at,
          changeId: rejectedId,
          payload: { candidateId: "cand_n2", reason: "approval rejected", gaps: [] },
        }),
        actor: approver,
      },
      ev("candidate.rejected", {
        ...at,
        changeId: conflictedId,
        payload: { candidateId: "cand_n3", reason: "merge conflict", gaps: [] },
      }),
      {
        ...ev("canonical.advanced", {
          ...at,
          changeId: landedId,
          payload: { candidateId: "cand_n4", fromGeneration: 0, toGeneration: 1, treeHash: "t" },
        }),
        actor: approver,
      },
    ]);
    const inbox = await listNotifications(t.db, { tenantId: TENANT, userId: REQUESTER });
    const byChange = Object.fromEntries(inbox.map((n) => [n.changeId, n]));
    expect(byChange[rejectedId]).toMatchObject({
      kind: "change_rejected",
      title: "Your Change “Cheaper shipping” was rejected",
      detail: "In shop: approval rejected: the totals are wrong.",
      actor: { id: person("approver"), name: "N approver" },
      projectName: "shop",
    });
    expect(byChange[conflictedId]).toMatchObject({ kind: "change_conflicted", actor: null });
    expect(byChange[landedId]).toMatchObject({
      kind: "change_promoted",
      title: "Your Change “Faster search” landed",
      detail: "It was promoted to S1 in shop.",
      actor: { id: person("approver"), name: "N approver" },
    });
    // Only the requester hears of their Change.
    expect(await t.db.notification.count({ where: { changeId: { in: [rejectedId, conflictedId, landedId] } } })).toBe(
      3,
    );
  });

  it("tells nobody of what they did themselves: a requester who promoted their own Change", async () => {
    const own = await change("chg_n5", "Own work");
    const advanced = {
      ...ev("canonical.advanced", {
        ...at,
        changeId: own,
        payload: { candidateId: "cand_n5", fromGeneration: 1, toGeneration: 2, treeHash: "t" },
      }),
      actor: { kind: "user" as const, id: REQUESTER },
    };
    await notify([advanced]);
    expect(await t.db.notification.count({ where: { eventId: advanced.eventId } })).toBe(0);
  });

  it("tells the tenant's operators and admins of a dead letter, through the dead-letter consumer's Event", async () => {
    await deadLetterPoisonLanding();
    expect(await t.db.outboxRow.count({ where: { eventType: "dead_letter.recorded" } })).toBe(1);
    await notify([]);
    const rows = await t.db.notification.findMany({ where: { kind: "dead_letter" }, orderBy: { userId: "asc" } });
    expect(rows.map((r) => [r.userId, r.deadLetterId, r.title])).toEqual([
      [person("admin"), "dl_cmd_land_poison", "Dead letter: candidate.land in shop"],
      [person("operator"), "dl_cmd_land_poison", "Dead letter: candidate.land in shop"],
    ]);
    // A second delivery of the same dead letter writes nothing new, so nobody is told twice.
    await deadLetterPoisonLanding();
    await notify([]);
    expect(await t.db.notification.count({ where: { kind: "dead_letter" } })).toBe(2);
  });
});

describe("the inbox", () => {
  it("counts what is unread and marks one or all read, the caller's own only", async () => {
    const owner = { tenantId: TENANT, userId: person("admin") };
    const unread = await countUnread(t.db, owner);
    expect(unread).toBeGreaterThanOrEqual(2);
    const [first] = await listNotifications(t.db, { ...owner, unreadOnly: true, limit: 1 });
    if (!first) throw new Error("the admin has no notification");
    const later = new Date(now.getTime() + 60_000);
    expect(await markNotificationsRead(t.db, { ...owner, notificationId: first.id }, later)).toEqual({
      marked: 1,
      unread: unread - 1,
    });
    // Again: nothing changes, and the first read time stays.
    expect(await markNotificationsRead(t.db, { ...owner, notificationId: first.id }, now)).toEqual({
      marked: 0,
      unread: unread - 1,
    });
    expect((await t.db.notification.findUniqueOrThrow({ where: { id: first.id } })).readAt).toEqual(later);
    // Another person's notification is not there for them, and reading it marks nothing.
    const approverBefore = await countUnread(t.db, { tenantId: TENANT, userId: person("approver") });
    const [theirs] = await listNotifications(t.db, { tenantId: TENANT, userId: person("approver") });
    await expect(
      markNotificationsRead(t.db, { ...owner, notificationId: theirs?.id ?? "" }, later),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      markNotificationsRead(t.db, { tenantId: "ten_elsewhere", userId: person("admin"), all: true }, later),
    ).resolves.toEqual({ marked: 0, unread: 0 });
    expect(await countUnread(t.db, { tenantId: TENANT, userId: person("approver") })).toBe(approverBefore);
    expect(await markNotificationsRead(t.db, { ...owner, all: true }, later)).toEqual({
      marked: unread - 1,
      unread: 0,
    });
    expect(await listNotifications(t.db, { ...owner, unreadOnly: true })).toEqual([]);
    expect(await countUnread(t.db, { tenantId: TENANT, userId: person("approver") })).toBe(approverBefore);
  });
});
