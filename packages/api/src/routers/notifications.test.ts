import { AUDIENCE_ROLES } from "@rhumbatron/core";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { hasAtLeast, ROLE_ORDER } from "../roles.ts";
import { ACME, callerAs, emailFor, OTHER, OUTSIDER_EMAIL, ROLES, seedTenants } from "../testing/fixtures.ts";

/**
 * The inbox and the project webhooks through the API, as each role calls them: a person reads and
 * marks only their own notifications; only admins manage hooks, the secret is answered once and
 * never again; another tenant's rows are NOT_FOUND.
 */
const t = useTestDatabase();
const tenantId = ACME.tenantId;
const SHOP = "proj_00000000-0000-4000-8000-00000000a001";
const SECRET_PROJECT = "proj_00000000-0000-4000-8000-00000000b001";

async function notification(id: string, userId: string, o: { tenant?: string; minutesAgo?: number } = {}) {
  await t.db.notification.create({
    data: {
      id,
      tenantId: o.tenant ?? tenantId,
      userId,
      eventId: `evt_${id}`,
      kind: "approval_requested",
      projectId: o.tenant === OTHER.tenantId ? SECRET_PROJECT : SHOP,
      candidateId: "cand_x",
      actorId: "usr_acme_member",
      title: `Approval waiting: ${id}`,
      occurredAt: new Date(Date.UTC(2026, 0, 1, 12, 0) - (o.minutesAgo ?? 0) * 60_000),
    },
  });
}

beforeAll(async () => {
  await seedTenants(t.db);
  await notification("ntf_a1", "usr_acme_approver", { minutesAgo: 2 });
  await notification("ntf_a2", "usr_acme_approver", { minutesAgo: 1 });
  await notification("ntf_b1", "usr_acme_admin");
  await notification("ntf_o1", "usr_other", { tenant: OTHER.tenantId });
});

describe("notifications", () => {
  it("who hears of an approval or a dead letter matches who may act on it (ROLE_ORDER)", () => {
    expect([...AUDIENCE_ROLES.approvers]).toEqual(ROLE_ORDER.filter((r) => hasAtLeast(r, "approver")));
    expect([...AUDIENCE_ROLES.operators]).toEqual(ROLE_ORDER.filter((r) => hasAtLeast(r, "operator")));
  });

  it("lists the caller's own, newest first, with people by name, and counts what is unread", async () => {
    const approver = callerAs(t.db, emailFor("approver"));
    const list = await approver.notifications.list({ tenantId });
    expect(list.map((n) => n.id)).toEqual(["ntf_a2", "ntf_a1"]);
    expect(list[0]).toMatchObject({ actor: { id: "usr_acme_member", name: "Acme member" }, projectName: "shop" });
    expect(await approver.notifications.unreadCount({ tenantId })).toEqual({ unread: 2 });
    expect((await callerAs(t.db, emailFor("viewer")).notifications.list({ tenantId })).map((n) => n.id)).toEqual([]);
  });

  it("marks one read, then all; another person's, or another tenant's, is NOT_FOUND and stays unread", async () => {
    const approver = callerAs(t.db, emailFor("approver"));
    expect(await approver.notifications.markRead({ tenantId, notificationId: "ntf_a1" })).toEqual({
      marked: 1,
      unread: 1,
    });
    expect((await approver.notifications.list({ tenantId, unreadOnly: true })).map((n) => n.id)).toEqual(["ntf_a2"]);
    await expect(approver.notifications.markRead({ tenantId, notificationId: "ntf_b1" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    const outsider = callerAs(t.db, OUTSIDER_EMAIL);
    await expect(
      outsider.notifications.markRead({ tenantId: OTHER.tenantId, notificationId: "ntf_a2" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(outsider.notifications.list({ tenantId })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await approver.notifications.markRead({ tenantId, all: true })).toEqual({ marked: 1, unread: 0 });
    expect(await callerAs(t.db, emailFor("admin")).notifications.unreadCount({ tenantId })).toEqual({ unread: 1 });
    expect(await outsider.notifications.unreadCount({ tenantId: OTHER.tenantId })).toEqual({ unread: 1 });
  });

  it("takes either one notification or all, not both and not neither", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    for (const input of [{}, { notificationId: "ntf_b1", all: true as const }]) {
      await expect(admin.notifications.markRead({ tenantId, ...input })).rejects.toMatchObject({
        code: "BAD_REQUEST",
      });
    }
    expect(await admin.notifications.unreadCount({ tenantId })).toEqual({ unread: 1 });
  });
});

describe("webhooks", () => {
  it("an admin subscribes a URL and gets its secret once; lists never carry it", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    const made = await admin.webhooks.create({
      tenantId,
      projectId: SHOP,
      url: "https://hooks.example.com/rhumbatron",
      eventTypes: ["approval.requested", "canonical.advanced"],
    });
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(made.webhook).toMatchObject({
      projectId: SHOP,
      url: "https://hooks.example.com/rhumbatron",
      eventTypes: ["approval.requested", "canonical.advanced"],
      secretPrefix: made.secret.slice(0, 12),
      createdBy: { id: "usr_acme_admin", name: "Acme admin" },
      lastDelivery: null,
    });
    const listed = await admin.webhooks.list({ tenantId, projectId: SHOP });
    expect(listed.map((h) => h.id)).toEqual([made.webhook.id]);
    expect(JSON.stringify(listed)).not.toContain(made.secret);
    expect(JSON.stringify(await admin.webhooks.deliveries({ tenantId, webhookId: made.webhook.id }))).toBe("[]");
  });

  it("refuses everyone below admin, and another tenant's admin finds nothing of this tenant's", async () => {
    const before = await t.db.webhook.count();
    for (const role of ROLES.filter((r) => r !== "admin")) {
      await expect(
        callerAs(t.db, emailFor(role)).webhooks.create({
          tenantId,
          projectId: SHOP,
          url: "https://hooks.example.com/x",
          eventTypes: ["approval.requested"],
        }),
      ).rejects.toMatchObject({ code: "FORBIDDEN" });
    }
    const outsider = callerAs(t.db, OUTSIDER_EMAIL);
    await expect(outsider.webhooks.list({ tenantId: OTHER.tenantId, projectId: SHOP })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    const [hook] = await callerAs(t.db, emailFor("admin")).webhooks.list({ tenantId, projectId: SHOP });
    for (const call of [
      () => outsider.webhooks.deliveries({ tenantId: OTHER.tenantId, webhookId: hook?.id ?? "" }),
      () => outsider.webhooks.remove({ tenantId: OTHER.tenantId, webhookId: hook?.id ?? "" }),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: "NOT_FOUND" });
    }
    expect(await t.db.webhook.count()).toBe(before);
  });

  it("refuses a URL that is not http(s), and an Event type that is not in the catalogue", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    for (const [url, eventTypes] of [
      ["ftp://hooks.example.com/x", ["approval.requested"]],
      ["https://hooks.example.com/x", ["no.such"]],
      ["https://hooks.example.com/x", []],
    ] as const) {
      await expect(
        admin.webhooks.create({
          tenantId,
          projectId: SHOP,
          url,
          eventTypes: eventTypes as unknown as ["approval.requested"],
        }),
      ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    }
  });

  it("removes a hook; removing it again is NOT_FOUND", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    const { webhook } = await admin.webhooks.create({
      tenantId,
      projectId: SHOP,
      url: "https://hooks.example.com/gone",
      eventTypes: ["dead_letter.recorded"],
    });
    expect(await admin.webhooks.remove({ tenantId, webhookId: webhook.id })).toEqual({ removed: webhook.id });
    await expect(admin.webhooks.remove({ tenantId, webhookId: webhook.id })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
