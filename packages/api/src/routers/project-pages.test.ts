import type { Db } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { handleTrpcRequest } from "../http.ts";
import { ACME, callerAs, emailFor, OTHER, OUTSIDER_EMAIL, ROLES, seedTenants } from "../testing/fixtures.ts";
import { testServices } from "../testing/services.ts";
import { createContext } from "../trpc.ts";
import { createCaller } from "./_app.ts";

/** projects.archive, projects.overview and the projects.events subscription (the project pages' API). */
const t = useTestDatabase();
const shop = "proj_00000000-0000-4000-8000-00000000a001";
const blog = "proj_00000000-0000-4000-8000-00000000a002";
const secret = "proj_00000000-0000-4000-8000-00000000b001";
const doomed = "proj_00000000-0000-4000-8000-00000000a003";

beforeAll(async () => {
  await seedTenants(t.db);
  await t.db.project.create({ data: { id: doomed, tenantId: ACME.tenantId, name: "doomed", status: "active" } });
  await seedHistory(t.db);
});

/** S0 from the template and S1 from a promoted Candidate of a Change, the view's counts and three feed rows. */
async function seedHistory(db: Db) {
  await db.change.create({
    data: { id: "chg_wish", projectId: shop, title: "Add a wishlist page", riskTier: "low", clientRequestId: "r-1" },
  });
  await db.candidate.create({
    data: {
      id: "cand_0001",
      projectId: shop,
      changeId: "chg_wish",
      compositionKey: "k1",
      baseGeneration: 0,
      baseCommit: "a".repeat(40),
      status: "promoted",
      promotedGeneration: 1,
    },
  });
  await db.canonicalGeneration.createMany({
    data: [
      { projectId: shop, generation: 0, commit: "a".repeat(40), tree: "b".repeat(40) },
      { projectId: shop, generation: 1, commit: "c".repeat(40), tree: "d".repeat(40), candidateId: "cand_0001" },
      { projectId: secret, generation: 0, commit: "e".repeat(40), tree: "f".repeat(40) },
    ],
  });
  await db.project.update({ where: { id: shop }, data: { canonicalGeneration: 1 } });
  await db.projectView.create({
    data: {
      projectId: shop,
      canonicalGeneration: 1,
      changesTotal: 1,
      tasksByState: { completed: 2 },
      candidatesByState: { promoted: 1 },
      eventCount: 3,
      lastEventType: "canonical.advanced",
    },
  });
  await db.projectViewEntity.create({
    data: { projectId: shop, kind: "change", entityId: "chg_wish", state: "verifying", eventId: "evt_3" },
  });
  for (const [i, type] of ["change.created", "task.completed", "canonical.advanced"].entries()) {
    await feedRow(db, shop, `evt_${i + 1}`, type);
  }
  await feedRow(db, secret, "evt_secret", "project.created");
}

function feedRow(db: Db, projectId: string, eventId: string, eventType: string) {
  return db.projectEvent.create({
    data: {
      projectId,
      eventId,
      eventType,
      actor: "system:test",
      summary: `${eventType} happened`,
      occurredAt: new Date(),
    },
  });
}

const written = async () => ({
  outbox: await t.db.outboxRow.count(),
  queue: await t.db.queueMessage.count(),
  archived: await t.db.project.count({ where: { status: "archived" } }),
});

describe("projects.archive", () => {
  it("archives an active project once: status, project.archived, one project.cleanup and one index.purge; a repeat writes nothing", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    expect(await admin.projects.archive({ tenantId: ACME.tenantId, projectId: doomed })).toEqual({
      projectId: doomed,
      archived: true,
    });
    expect((await t.db.project.findUniqueOrThrow({ where: { id: doomed } })).status).toBe("archived");
    const events = await t.db.outboxRow.findMany({ where: { projectId: doomed } });
    expect(events.map((e) => e.eventType)).toEqual(["project.archived"]);
    expect(events[0]?.envelope).toMatchObject({ actor: { kind: "user", id: "usr_acme_admin" } });
    const cleanup = await t.db.queueMessage.findMany({ where: { projectId: doomed } });
    expect(cleanup.map((q) => [q.commandType, q.commandId]).sort()).toEqual([
      ["index.purge", `cmd_index_purge_${doomed}`],
      ["project.cleanup", `cmd_cleanup_${doomed}`],
    ]);

    const before = await written();
    expect(await admin.projects.archive({ tenantId: ACME.tenantId, projectId: doomed })).toEqual({
      projectId: doomed,
      archived: false,
    });
    expect(await written()).toEqual(before);
    // An archived project is listed last, takes no new Changes and offers no clone URL.
    const listed = await admin.projects.list({ tenantId: ACME.tenantId });
    expect(listed.at(-1)).toMatchObject({ id: doomed, status: "archived" });
    await expect(
      admin.change.create({
        tenantId: ACME.tenantId,
        projectId: doomed,
        clientRequestId: "late",
        change: { title: "Too late", riskTier: "low", tasks: [{ key: "a", title: "A" }] },
      }),
    ).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
    await expect(admin.projects.cloneAccess({ tenantId: ACME.tenantId, projectId: doomed })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
  });

  it.each(ROLES.filter((r) => r !== "admin"))("refuses a %s with FORBIDDEN and writes nothing", async (role) => {
    const before = await written();
    await expect(
      callerAs(t.db, emailFor(role)).projects.archive({ tenantId: ACME.tenantId, projectId: shop }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await written()).toEqual(before);
  });

  it("answers another tenant's project with NOT_FOUND (or FORBIDDEN in a tenant the caller is not in), writing nothing", async () => {
    const before = await written();
    const acmeAdmin = callerAs(t.db, emailFor("admin"));
    await expect(acmeAdmin.projects.archive({ tenantId: ACME.tenantId, projectId: secret })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    const outsider = callerAs(t.db, OUTSIDER_EMAIL);
    await expect(outsider.projects.archive({ tenantId: ACME.tenantId, projectId: shop })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(outsider.projects.archive({ tenantId: OTHER.tenantId, projectId: shop })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(
      acmeAdmin.projects.archive({ tenantId: ACME.tenantId, projectId: "proj_missing" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await written()).toEqual(before);
    expect((await t.db.project.findUniqueOrThrow({ where: { id: shop } })).status).toBe("active");
  });

  it("refuses a project that is still provisioning with PRECONDITION_FAILED", async () => {
    const before = await written();
    await expect(
      callerAs(t.db, emailFor("admin")).projects.archive({ tenantId: ACME.tenantId, projectId: blog }),
    ).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringContaining("provisioning") });
    expect(await written()).toEqual(before);
  });
});

describe("projects.overview", () => {
  it("shows a viewer the generations with the Candidate and Change each came from, and the view's counts", async () => {
    const o = await callerAs(t.db, emailFor("viewer")).projects.overview({ tenantId: ACME.tenantId, projectId: shop });
    expect(o.project).toMatchObject({ id: shop, name: "shop", status: "active", canonicalGeneration: 1 });
    expect(o.generations.map((g) => [g.generation, g.candidateId, g.changeId, g.changeTitle])).toEqual([
      [0, null, null, null],
      [1, "cand_0001", "chg_wish", "Add a wishlist page"],
    ]);
    expect(o.view).toMatchObject({
      canonicalGeneration: 1,
      changesTotal: 1,
      changesByState: { verifying: 1 },
      tasksByState: { completed: 2 },
      candidatesByState: { promoted: 1 },
      eventCount: 3,
    });
  });

  it("counts each Candidate as what it is now: a cancelled one is cancelled, not what its last Event said", async () => {
    await t.db.change.create({
      data: { id: "chg_gone", projectId: shop, title: "Cancelled", riskTier: "low", clientRequestId: "r-gone" },
    });
    await t.db.candidate.create({
      data: {
        id: "cand_gone",
        projectId: shop,
        changeId: "chg_gone",
        compositionKey: "k-gone",
        baseGeneration: 1,
        baseCommit: "c".repeat(40),
        status: "cancelled",
      },
    });
    // The projector last saw it verified.
    await t.db.projectView.update({
      where: { projectId: shop },
      data: { candidatesByState: { promoted: 1, verified: 1 } },
    });
    try {
      const o = await callerAs(t.db, emailFor("viewer")).projects.overview({
        tenantId: ACME.tenantId,
        projectId: shop,
      });
      expect(o.view?.candidatesByState).toEqual({ promoted: 1, cancelled: 1 });
    } finally {
      await t.db.candidate.delete({ where: { id: "cand_gone" } });
      await t.db.change.delete({ where: { id: "chg_gone" } });
      await t.db.projectView.update({ where: { projectId: shop }, data: { candidatesByState: { promoted: 1 } } });
    }
  });

  it("has no view before the projector's first Event", async () => {
    const o = await callerAs(t.db, emailFor("viewer")).projects.overview({ tenantId: ACME.tenantId, projectId: blog });
    expect(o.view).toBeNull();
    expect(o.generations).toEqual([]);
  });

  it("answers another tenant's project with NOT_FOUND and a non-member with FORBIDDEN", async () => {
    await expect(
      callerAs(t.db, emailFor("admin")).projects.overview({ tenantId: ACME.tenantId, projectId: secret }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      callerAs(t.db, OUTSIDER_EMAIL).projects.overview({ tenantId: ACME.tenantId, projectId: shop }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
  });
});

describe("projects.events (subscription)", () => {
  function subscriber(email: string, signal: AbortSignal) {
    return createCaller(
      createContext({ db: t.db, headers: new Headers(), localUserEmail: email, services: testServices() }),
      { signal },
    );
  }

  it("sends the recent feed, then each new row as it is written, and resumes after a given ID", async () => {
    const stop = new AbortController();
    const feed = await subscriber(emailFor("viewer"), stop.signal).projects.events({
      tenantId: ACME.tenantId,
      projectId: shop,
    });
    const it = feed[Symbol.asyncIterator]();
    const next = async () => {
      const r = await it.next();
      if (r.done) throw new Error("the feed ended");
      const [id, data] = r.value as unknown as [string, { id: string; eventType: string; summary: string }];
      expect(id).toBe(data.id);
      return data;
    };
    const history = [await next(), await next(), await next()];
    expect(history.map((e) => e.eventType)).toEqual(["change.created", "task.completed", "canonical.advanced"]);
    // Written while the subscription is open: it arrives on the next poll. Another project's row does not.
    await feedRow(t.db, secret, "evt_secret_2", "change.created");
    await feedRow(t.db, shop, "evt_4", "candidate.created");
    const live = await next();
    expect(live).toMatchObject({ eventType: "candidate.created", summary: "candidate.created happened" });
    stop.abort();
    expect((await it.next()).done).toBe(true);

    // A reconnect with the last seen ID gets only what came after it.
    const again = new AbortController();
    const resumed = await subscriber(emailFor("viewer"), again.signal).projects.events({
      tenantId: ACME.tenantId,
      projectId: shop,
      lastEventId: history[1]?.id ?? null,
    });
    const it2 = resumed[Symbol.asyncIterator]();
    const first = await it2.next();
    expect((first.value as unknown as [string, { eventType: string }])[1].eventType).toBe("canonical.advanced");
    again.abort();
    await it2.return?.();
  });

  it("refuses another tenant's project with NOT_FOUND before the stream opens, and a non-member with FORBIDDEN", async () => {
    const stop = new AbortController();
    await expect(
      subscriber(emailFor("admin"), stop.signal).projects.events({ tenantId: ACME.tenantId, projectId: secret }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      subscriber(OUTSIDER_EMAIL, stop.signal).projects.events({ tenantId: ACME.tenantId, projectId: shop }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(
      subscriber(emailFor("viewer"), stop.signal).projects.events({
        tenantId: ACME.tenantId,
        projectId: shop,
        lastEventId: "not-a-number",
      }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});

describe("projects.events over HTTP (server-sent events, as httpSubscriptionLink reads them)", () => {
  function sse(input: unknown, email: string, signal: AbortSignal) {
    const query = encodeURIComponent(JSON.stringify({ json: input }));
    const req = new Request(`http://localhost/api/trpc/projects.events?input=${query}`, { signal });
    return handleTrpcRequest(req, { db: () => t.db, services: testServices, localUserEmail: email });
  }

  /** Reads the stream until `enough` says the text so far is enough. */
  async function readUntil(res: Response, enough: (text: string) => boolean): Promise<string> {
    const reader = res.body?.getReader();
    if (!reader) throw new Error("no body");
    const decoder = new TextDecoder();
    let text = "";
    while (!enough(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    return text;
  }

  it("streams the feed rows as SSE messages with their feed IDs", async () => {
    const stop = new AbortController();
    const res = await sse({ tenantId: ACME.tenantId, projectId: shop }, emailFor("viewer"), stop.signal);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const text = await readUntil(res, (x) => (x.match(/^id: \d+$/gm) ?? []).length >= 3);
    stop.abort();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => m[1]);
    expect(ids.length).toBeGreaterThanOrEqual(3);
    expect(text).toContain("change.created happened");
    expect(text).not.toContain("evt_secret");
  });

  it("sends another tenant's project as an SSE error (NOT_FOUND), with none of its rows", async () => {
    const stop = new AbortController();
    const res = await sse({ tenantId: ACME.tenantId, projectId: secret }, emailFor("admin"), stop.signal);
    const text = await readUntil(res, (x) => /serialized-error\ndata: .*\n/.test(x));
    stop.abort();
    expect(text).toContain("NOT_FOUND");
    expect(text).not.toContain("project.created happened");
  });
});
