import { readFile } from "node:fs/promises";
import { createApiToken, type Role, revokeApiToken } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRhumbatronClient } from "./client.ts";
import { RhumbatronError } from "./errors.ts";
import { type ApiServer, startApiServer } from "./testing/api-server.ts";
import { ACME, SHOP, seedCandidate, seedWithTokens } from "./testing/seed.ts";

const t = useTestDatabase();
const VERIFIED = "cand_00000000000000000000000000000c01";
const EXAMPLE = new URL("../examples/wishlist-change.json", import.meta.url);
let server: ApiServer;
let tokens: Record<Role, string>;

beforeAll(async () => {
  tokens = await seedWithTokens(t.db);
  server = await startApiServer(t.db);
});
afterAll(() => server?.close());

/** A client whose requests are counted, to prove a refused input sent nothing. */
function clientAs(role: Role | null, extra: { token?: string; url?: string } = {}) {
  const sent: string[] = [];
  const client = createRhumbatronClient({
    url: extra.url ?? server.url,
    ...(role ? { token: tokens[role] } : extra.token ? { token: extra.token } : {}),
    fetch: (input, init) => {
      sent.push(String(input));
      return fetch(input, init);
    },
  });
  return { client, sent };
}

async function rejection(p: Promise<unknown>): Promise<RhumbatronError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RhumbatronError);
  return err as RhumbatronError;
}

describe("whoami", () => {
  it("names the token's one tenant and its role", async () => {
    const { client } = clientAs("approver");
    const w = await client.whoami();
    expect(w.tenant).toEqual({ tenantId: ACME.tenantId, slug: "acme", name: "Acme", role: "approver" });
    expect(w.memberships).toHaveLength(1);
    expect(await client.tenantId()).toBe(ACME.tenantId);
  });

  it("refuses a tenant the token does not act in, saying which it does", async () => {
    const client = createRhumbatronClient({ url: server.url, token: tokens.member, tenant: "other" });
    const err = await rejection(client.whoami());
    expect(err.code).toBe("FORBIDDEN");
    expect(err.message).toContain("they act in: acme");
  });
});

describe("createChange", () => {
  it("creates a Change from the example Work Graph file, once per request id", async () => {
    const { client } = clientAs("member");
    const json = await readFile(EXAMPLE, "utf8");
    const first = await client.createChange(SHOP, json, { clientRequestId: "sdk-example-1" });
    expect(first).toMatchObject({ created: true, clientRequestId: "sdk-example-1" });
    const tasks = await t.db.task.findMany({ where: { changeId: first.changeId }, orderBy: { position: "asc" } });
    expect(tasks.map((x) => [x.key, x.dependencies])).toEqual([
      ["page", []],
      ["script", ["page"]],
      ["link", ["page"]],
    ]);
    const again = await client.createChange(SHOP, json, { clientRequestId: "sdk-example-1" });
    expect(again).toEqual({ changeId: first.changeId, created: false, clientRequestId: "sdk-example-1" });
    const change = await client.getChange(first.changeId);
    expect(change).toMatchObject({ riskTier: "high", status: "open" });
    expect(change.createdAt).toBeInstanceOf(Date); // superjson on the wire
  });

  it("refuses a bad Work Graph before sending anything, naming each problem", async () => {
    const { client, sent } = clientAs("member");
    const before = await t.db.change.count();
    const cyclic = {
      title: "Loop",
      riskTier: "low" as const,
      tasks: [
        { key: "a", title: "a", dependsOn: ["b"] },
        { key: "b", title: "b", dependsOn: ["a"] },
      ],
    };
    const cycle = await rejection(client.createChange(SHOP, cyclic));
    expect(cycle.code).toBe("BAD_REQUEST");
    expect(cycle.message).toContain("the Work Graph has a cycle: a -> b -> a");
    expect(cycle.message).toContain("nothing was sent");

    const badShape = await rejection(client.createChange(SHOP, '{"title": "", "riskTier": "huge", "tasks": []}'));
    expect(badShape.code).toBe("BAD_REQUEST");
    expect(badShape.issues.map((i) => i.path).sort()).toEqual(["riskTier", "tasks", "title"]);
    expect(badShape.message).not.toContain("\n");

    const notJson = await rejection(client.createChange(SHOP, "{ tasks: "));
    expect(notJson.message).toContain("not valid JSON");

    expect(sent).toEqual([]);
    expect(await t.db.change.count()).toBe(before);
  });

  it("maps a server-side refusal: another tenant's project is NOT_FOUND", async () => {
    const { client } = clientAs("member");
    const json = await readFile(EXAMPLE, "utf8");
    const err = await rejection(client.createChange("proj_00000000-0000-4000-8000-00000000b001", json));
    expect(err.code).toBe("NOT_FOUND");
    expect(err.httpStatus).toBe(404);
    expect(err.message).toMatch(/not found; check the ID/);
  });
});

describe("auth errors", () => {
  it("turns a revoked token into UNAUTHORIZED with where to get a new one", async () => {
    const { secret, token } = await createApiToken(
      t.db,
      { tenantId: ACME.tenantId, userId: "usr_acme_admin", name: "soon revoked", role: "admin" },
      new Date(),
    );
    const client = createRhumbatronClient({ url: server.url, token: secret });
    expect((await client.whoami()).tenant.role).toBe("admin");
    await revokeApiToken(t.db, { tenantId: ACME.tenantId, tokenId: token.id, userId: null }, new Date());
    const err = await rejection(createRhumbatronClient({ url: server.url, token: secret }).listProjects());
    expect(err.code).toBe("UNAUTHORIZED");
    expect(err.httpStatus).toBe(401);
    expect(err.message).toBe(`the token is missing, revoked or unknown; create one at ${server.url}/settings/tokens`);
  });

  it("refuses a viewer's approval with FORBIDDEN, and nothing is recorded", async () => {
    const { tree } = await seedCandidate(t.db, { changeId: "chg_sdk_v", candidateId: VERIFIED, status: "verified" });
    const { client } = clientAs("viewer");
    const c = await client.getCandidate(VERIFIED);
    expect(c.composedTree).toBe(tree);
    const err = await rejection(client.approve(VERIFIED, tree, "looks good"));
    expect(err.code).toBe("FORBIDDEN");
    expect(err.message).toContain("Requires the approver role or above");
    expect(err.message).toContain("/settings/tokens");
    expect(await t.db.approval.count({ where: { candidateId: VERIFIED } })).toBe(0);
  });

  it("lets an approver approve the shown tree; a second decision is a CONFLICT", async () => {
    const { client } = clientAs("approver");
    const tree = (await client.getCandidate(VERIFIED)).composedTree as string;
    const ok = await client.approve(VERIFIED, tree);
    expect(ok.decision).toMatchObject({ kind: "granted", treeHash: tree, by: "usr_acme_approver" });
    const err = await rejection(client.reject(VERIFIED, tree, "changed my mind"));
    expect(err.code).toBe("CONFLICT");
    // No fork on this machine holds the composed commit, so promotion lists that block.
    expect(await client.promote(VERIFIED)).toEqual({
      outcome: "blocked",
      blocks: ["the composed commit is not in the Candidate fork"],
    });
    // Each listed with its Change's title (a field added beside the Candidate's own).
    expect((await client.listCandidates(SHOP)).find((x) => x.id === VERIFIED)).toMatchObject({
      changeId: "chg_sdk_v",
      changeTitle: "Change chg_sdk_v",
    });
  });
});

describe("transport errors", () => {
  it("reports a server that does not answer as UNREACHABLE", async () => {
    const closed = await startApiServer(t.db);
    await closed.close();
    const { client } = clientAs("viewer", { url: closed.url });
    const err = await rejection(client.whoami());
    expect(err.code).toBe("UNREACHABLE");
    expect(err.message).toContain(`cannot reach ${closed.url} (ECONNREFUSED)`);
  });

  it("reports something that is not the API as BAD_RESPONSE", async () => {
    const { client } = clientAs("viewer", { url: `${server.url}/not-the-api` });
    const err = await rejection(client.whoami());
    expect(err.code).toBe("BAD_RESPONSE");
    expect(err.message).toContain("not as the Rhumbatron API; check --url");
  });
});

describe("watchChange", () => {
  it("reports Task states as they move and ends when the Candidate is verified", async () => {
    const { client } = clientAs("viewer");
    const member = clientAs("member").client;
    const { changeId } = await member.createChange(SHOP, await readFile(EXAMPLE, "utf8"), {
      clientRequestId: "sdk-watch",
    });
    const seen: string[] = [];
    // Each update moves the world one step, so the next poll sees something new.
    const steps = [
      () => t.db.task.updateMany({ where: { changeId }, data: { state: "running" } }),
      () => t.db.task.updateMany({ where: { changeId }, data: { state: "completed" } }),
      async () => {
        await t.db.change.update({ where: { id: changeId }, data: { status: "verifying" } });
        await t.db.candidate.create({
          data: {
            id: "cand_00000000000000000000000000000c02",
            projectId: SHOP,
            changeId,
            compositionKey: "k_watch",
            baseGeneration: 0,
            baseCommit: "c0",
            status: "verified",
            approvalRequired: true,
          },
        });
      },
    ];
    const result = await client.watchChange(
      changeId,
      async (u) => {
        for (const x of u.transitions)
          seen.push(x.kind === "task" ? `${x.key}:${x.from}->${x.to}` : `${x.kind}:${x.to}`);
        await steps.shift()?.();
      },
      { intervalMs: 10 },
    );
    expect(result).toMatchObject({
      outcome: "verified",
      ok: true,
      candidate: { id: "cand_00000000000000000000000000000c02" },
    });
    expect(seen).toEqual([
      "change:open",
      "page:null->pending",
      "script:null->pending",
      "link:null->pending",
      "page:pending->running",
      "script:pending->running",
      "link:pending->running",
      "page:running->completed",
      "script:running->completed",
      "link:running->completed",
      "change:verifying",
      "candidate:verified",
    ]);
  });

  it("stops when asked to", async () => {
    const { client } = clientAs("viewer");
    const { changeId } = await clientAs("member").client.createChange(SHOP, await readFile(EXAMPLE, "utf8"));
    const stop = new AbortController();
    const watching = client.watchChange(changeId, () => stop.abort(new Error("enough")), {
      intervalMs: 10,
      signal: stop.signal,
    });
    await expect(watching).rejects.toThrow("enough");
  });
});

describe("the project's policy", () => {
  it("reads v1, refuses a bad document before sending anything, and sets v2 with the version it was edited from", async () => {
    const { client, sent } = clientAs("admin");
    const v1 = await client.getPolicy(SHOP);
    expect(v1).toMatchObject({ version: 1, implicit: true });

    const before = sent.length;
    const bad = { ...v1.document, humanGateRiskTiers: ["hihg"] };
    const err = await rejection(client.setPolicy(SHOP, bad));
    expect(err.code).toBe("BAD_REQUEST");
    expect(err.issues).toEqual([
      { path: "humanGateRiskTiers[0]", message: 'Invalid option: expected one of "low"|"medium"|"high"|"critical"' },
    ]);
    expect(sent.length).toBe(before);

    const r = await client.setPolicy(SHOP, { ...v1.document, p95LimitMs: 120 }, { expectedVersion: 1 });
    expect(r).toMatchObject({ version: 2, changed: true, changedFields: ["p95LimitMs"] });
    const stale = await rejection(client.setPolicy(SHOP, v1.document, { expectedVersion: 1 }));
    expect(stale.code).toBe("CONFLICT");
    expect((await client.policyHistory(SHOP)).map((p) => p.version)).toEqual([2, 1]);
    const viewer = clientAs("viewer").client;
    expect((await viewer.getPolicy(SHOP)).document.p95LimitMs).toBe(120);
    expect((await rejection(viewer.setPolicy(SHOP, v1.document))).code).toBe("FORBIDDEN");
  });
});

describe("the raw tRPC client", () => {
  it("acts in the token's tenant when the input names none; a tenant it names is sent as named", async () => {
    const { client, sent } = clientAs("viewer");
    await seedCandidate(t.db, {
      changeId: "chg_sdk_raw",
      candidateId: "cand_00000000000000000000000000000c03",
      status: "created",
    });
    const changes = await client.trpc.change.list.query({ projectId: SHOP });
    expect(changes.map((c) => c.id)).toContain("chg_sdk_raw");
    expect(decodeURIComponent(sent.at(-1) ?? "")).toContain(`"tenantId":"${ACME.tenantId}"`);
    const other = await client.trpc.change.list.query({ tenantId: "ten_other", projectId: SHOP }).catch((e) => e);
    expect(other).toMatchObject({ data: { code: "FORBIDDEN" } });
    expect((await client.trpc.tenants.mine.query()).map((m) => m.slug)).toEqual(["acme"]);
  });
});
