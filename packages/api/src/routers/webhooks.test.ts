import { loadConfig } from "@rhumbatron/core";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { ACME, callerAs, emailFor, OTHER, OUTSIDER_EMAIL, ROLES, seedTenants } from "../testing/fixtures.ts";
import { testServices } from "../testing/services.ts";
import { createContext } from "../trpc.ts";
import { createCaller } from "./_app.ts";

/**
 * webhooks.update through the API: an admin changes a hook's URL and Event types with create's own
 * checks, and pauses or resumes it; every refusal is a typed 4xx that changes nothing. (That the
 * next Event is delivered by the new settings, and not while paused, is apps/worker's
 * webhooks.test.ts, with a real receiver.)
 */
const t = useTestDatabase();
const tenantId = ACME.tenantId;
const SHOP = "proj_00000000-0000-4000-8000-00000000a001";

/** An admin whose deployment runs the prod config: private targets refused. */
const prodAdmin = () =>
  createCaller(
    createContext({
      db: t.db,
      headers: new Headers(),
      localUserEmail: emailFor("admin"),
      services: { ...testServices(), config: loadConfig("prod") },
    }),
  );

/** The hook's row as stored, the secret included: what must not change when an update is refused. */
const row = (id: string) => t.db.webhook.findUniqueOrThrow({ where: { id } });

let hookId = "";
beforeAll(async () => {
  await seedTenants(t.db);
  const made = await callerAs(t.db, emailFor("admin")).webhooks.create({
    tenantId,
    projectId: SHOP,
    url: "https://hooks.example.com/first",
    eventTypes: ["approval.requested"],
  });
  hookId = made.webhook.id;
});

describe("webhooks.update", () => {
  it("changes the URL and the Event types, keeps the secret, and lists the new settings", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    const before = await row(hookId);
    const updated = await admin.webhooks.update({
      tenantId,
      webhookId: hookId,
      url: "https://hooks.example.com/moved",
      eventTypes: ["canonical.advanced", "candidate.rejected"],
    });
    expect(updated).toMatchObject({
      id: hookId,
      url: "https://hooks.example.com/moved",
      eventTypes: ["canonical.advanced", "candidate.rejected"],
      paused: false,
      secretPrefix: before.secretPrefix,
    });
    expect(JSON.stringify(updated)).not.toContain(before.secret);
    // One field alone changes only that field.
    await admin.webhooks.update({ tenantId, webhookId: hookId, eventTypes: ["approval.requested"] });
    const [listed] = await admin.webhooks.list({ tenantId, projectId: SHOP });
    expect(listed).toMatchObject({ url: "https://hooks.example.com/moved", eventTypes: ["approval.requested"] });
    expect((await row(hookId)).secret).toBe(before.secret);
  });

  it("pauses and resumes; the list shows which, and resuming records when", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    expect(await admin.webhooks.update({ tenantId, webhookId: hookId, paused: true })).toMatchObject({ paused: true });
    expect((await admin.webhooks.list({ tenantId, projectId: SHOP }))[0]?.paused).toBe(true);
    expect((await row(hookId)).resumedAt).toBeNull();
    expect(await admin.webhooks.update({ tenantId, webhookId: hookId, paused: false })).toMatchObject({
      paused: false,
    });
    const resumedAt = (await row(hookId)).resumedAt;
    expect(resumedAt).toBeInstanceOf(Date);
    // Resuming a hook that is not paused is no resume: the time stays.
    await admin.webhooks.update({ tenantId, webhookId: hookId, paused: false });
    expect((await row(hookId)).resumedAt).toEqual(resumedAt);
  });

  it("refuses bad input with a typed 4xx and changes nothing", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    const before = await row(hookId);
    const refusals: [string, () => Promise<unknown>, string][] = [
      [
        "a loopback URL under the prod config",
        () => prodAdmin().webhooks.update({ tenantId, webhookId: hookId, url: "http://127.0.0.1:9000/hook" }),
        "BAD_REQUEST",
      ],
      [
        "localhost under the prod config",
        () => prodAdmin().webhooks.update({ tenantId, webhookId: hookId, url: "http://localhost/hook", paused: true }),
        "BAD_REQUEST",
      ],
      [
        "a URL that is not http(s)",
        () => admin.webhooks.update({ tenantId, webhookId: hookId, url: "ftp://hooks.example.com/x" }),
        "BAD_REQUEST",
      ],
      [
        "an Event type that is not in the catalogue",
        () =>
          admin.webhooks.update({
            tenantId,
            webhookId: hookId,
            eventTypes: ["no.such"] as unknown as ["approval.requested"],
          }),
        "BAD_REQUEST",
      ],
      [
        "an empty list of Event types",
        () => admin.webhooks.update({ tenantId, webhookId: hookId, eventTypes: [], paused: true }),
        "BAD_REQUEST",
      ],
      ["nothing to change", () => admin.webhooks.update({ tenantId, webhookId: hookId }), "BAD_REQUEST"],
      [
        "an unknown hook",
        () => admin.webhooks.update({ tenantId, webhookId: "whk_nosuch", paused: true }),
        "NOT_FOUND",
      ],
      [
        "another tenant's admin, in its own tenant",
        () =>
          callerAs(t.db, OUTSIDER_EMAIL).webhooks.update({
            tenantId: OTHER.tenantId,
            webhookId: hookId,
            url: "https://evil.example.com/in",
            paused: true,
          }),
        "NOT_FOUND",
      ],
      [
        "another tenant's admin, naming this tenant",
        () => callerAs(t.db, OUTSIDER_EMAIL).webhooks.update({ tenantId, webhookId: hookId, paused: true }),
        "FORBIDDEN",
      ],
      ...ROLES.filter((r) => r !== "admin").map((role): [string, () => Promise<unknown>, string] => [
        `an Acme ${role}`,
        () => callerAs(t.db, emailFor(role)).webhooks.update({ tenantId, webhookId: hookId, paused: true }),
        "FORBIDDEN",
      ]),
    ];
    for (const [what, call, code] of refusals) {
      await expect(call(), what).rejects.toMatchObject({ code });
      expect(await row(hookId), what).toEqual(before);
    }
    // The same URL is fine where private targets are allowed (dev): the refusal was the config's.
    const dev = await admin.webhooks.update({ tenantId, webhookId: hookId, url: "http://127.0.0.1:9000/hook" });
    expect(dev.url).toBe("http://127.0.0.1:9000/hook");
  });
});
