import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Role } from "@rhumbatron/db";
import { buildSearchIndex, localFolderBlobStore, type SearchIndexDoc, searchIndexKey } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ACME,
  callerAs,
  emailFor,
  LONER_EMAIL,
  OTHER,
  OUTSIDER_EMAIL,
  ROLES,
  recordingDb,
  rejection,
  seedTenants,
} from "../testing/fixtures.ts";
import { testServices } from "../testing/services.ts";
import { createContext } from "../trpc.ts";
import { createCaller } from "./_app.ts";

/** projects.releases, projects.setReleaseTarget, projects.indexes and projects.search. */
const t = useTestDatabase();
const shop = "proj_00000000-0000-4000-8000-00000000a001";
const blog = "proj_00000000-0000-4000-8000-00000000a002";
const secret = "proj_00000000-0000-4000-8000-00000000b001";
const broken = "proj_00000000-0000-4000-8000-00000000a004";
const archived = "proj_00000000-0000-4000-8000-00000000a005";
const TREE1 = "1".repeat(40);
const TREE2 = "2".repeat(40);

let root: string;
const blobs = () => localFolderBlobStore(join(root, "blobs"));

/** A caller whose blob store is this file's folder (where the index blobs below are written). */
function callerWithBlobs(email: string, db = t.db) {
  const services = { ...testServices(), blobs: blobs() };
  return createCaller(createContext({ db, headers: new Headers(), localUserEmail: email, services }));
}

/** What setReleaseTarget may write: every project's target and update time. */
const projectsRows = () =>
  t.db.project.findMany({ select: { id: true, releaseTarget: true, updatedAt: true }, orderBy: { id: "asc" } });

const enc = (s: string) => new TextEncoder().encode(s);

/** Writes an index the way index.build does: the blob at searchIndexKey, then a built project_indexes row. */
async function writeIndex(projectId: string, generation: number, tree: string, files: Record<string, string>) {
  const index = buildSearchIndex(Object.entries(files).map(([path, text]) => ({ path, content: enc(text) })));
  const doc: SearchIndexDoc = { version: 1, projectId, generation, tree, commit: "c".repeat(40), ...index };
  const key = searchIndexKey(projectId, tree);
  await blobs().put(key, enc(JSON.stringify(doc)), { contentType: "application/json" });
  await t.db.projectIndex.create({
    data: {
      id: `pidx_${projectId.slice(-4)}_${generation}`,
      projectId,
      generation,
      tree,
      status: "built",
      files: index.files.length,
      indexKey: key,
      createdAt: new Date(Date.UTC(2026, 9, generation)),
    },
  });
}

beforeAll(async () => {
  await seedTenants(t.db);
  root = await mkdtemp(join(tmpdir(), "rhumbatron-project-releases-"));
  await t.db.project.createMany({
    data: [
      { id: broken, tenantId: ACME.tenantId, name: "broken", status: "active", canonicalGeneration: 1 },
      { id: archived, tenantId: ACME.tenantId, name: "gone", status: "archived" },
    ],
  });
  const at = (h: number) => new Date(Date.UTC(2026, 9, 1, h));
  await t.db.release.createMany({
    data: [
      {
        id: `rel_${shop}_1`,
        projectId: shop,
        generation: 1,
        commit: "a".repeat(40),
        tree: TREE1,
        target: { kind: "folder" },
        status: "succeeded",
        steps: [
          { step: "deliver", status: "succeeded", startedAt: at(1).toISOString(), finishedAt: at(1).toISOString() },
        ],
        output: { delivered: { kind: "folder", files: 3 } },
        createdAt: at(1),
      },
      {
        id: `rel_${shop}_2`,
        projectId: shop,
        generation: 2,
        commit: "b".repeat(40),
        tree: TREE2,
        target: { kind: "webhook", url: "https://hooks.example.com/release" },
        status: "failed",
        steps: [
          {
            step: "attempt",
            status: "failed",
            attempt: 4,
            startedAt: at(2).toISOString(),
            finishedAt: at(2).toISOString(),
            error: "webhook https://hooks.example.com/release answered 500",
          },
        ],
        error: "webhook https://hooks.example.com/release answered 500",
        createdAt: at(2),
      },
      {
        id: `rel_${shop}_3`,
        projectId: shop,
        generation: 3,
        commit: "d".repeat(40),
        tree: "3".repeat(40),
        target: { kind: "folder", path: "/srv/releases/shop" },
        createdAt: at(3),
      },
      {
        id: `rel_${secret}_1`,
        projectId: secret,
        generation: 1,
        commit: "e".repeat(40),
        tree: "e".repeat(40),
        target: { kind: "folder" },
      },
    ],
  });
  await writeIndex(shop, 1, TREE1, { "src/cart.ts": "export function addToCart() {}\n" });
  await writeIndex(shop, 2, TREE2, {
    "README.md": "# Shop\n\nThe cart keeps items.\n",
    "src/cart.ts":
      "// the cart\nexport function addToCart(items: string[], item: string) {\n  return [...items, item];\n}\n",
    "src/wishlist.ts": "export const wished = new Set<string>();\nexport function moveToCart() {}\n",
  });
  await writeIndex(secret, 1, "9".repeat(40), { "secret.ts": "const addToCart = 1;\n" });
  await t.db.projectIndex.create({
    data: {
      id: "pidx_broken_failed",
      projectId: broken,
      generation: 1,
      status: "failed",
      error: "main is at 0123abc which is no generation",
    },
  });
  await t.db.projectIndex.create({
    data: { id: "pidx_gone", projectId: archived, generation: 1, tree: TREE1, status: "purged", files: 2 },
  });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("projects.releases", () => {
  it.each(ROLES)("shows a %s the current target and the releases, newest generation first", async (role) => {
    const out = await callerAs(t.db, emailFor(role)).projects.releases({ tenantId: ACME.tenantId, projectId: shop });
    expect(out.target).toEqual({ kind: "folder" });
    expect(out.releases.map((r) => [r.id, r.generation, r.status])).toEqual([
      [`rel_${shop}_3`, 3, "running"],
      [`rel_${shop}_2`, 2, "failed"],
      [`rel_${shop}_1`, 1, "succeeded"],
    ]);
    const failed = out.releases[1];
    expect(failed).toMatchObject({
      commit: "b".repeat(40),
      tree: TREE2,
      target: { kind: "webhook", url: "https://hooks.example.com/release" },
      error: "webhook https://hooks.example.com/release answered 500",
    });
    expect(failed?.steps).toEqual([expect.objectContaining({ step: "attempt", status: "failed", attempt: 4 })]);
    expect(out.releases[2]?.output).toEqual({ delivered: { kind: "folder", files: 3 } });
    expect(out.releases[2]?.createdAt).toBeInstanceOf(Date);
  });

  it("has none for a project that was never released", async () => {
    const out = await callerAs(t.db, emailFor("viewer")).projects.releases({
      tenantId: ACME.tenantId,
      projectId: blog,
    });
    expect(out).toEqual({ target: { kind: "folder" }, releases: [] });
  });

  it("answers another tenant's project with NOT_FOUND and a non-member with FORBIDDEN", async () => {
    const outsider = callerAs(t.db, OUTSIDER_EMAIL);
    const own = await rejection(outsider.projects.releases({ tenantId: OTHER.tenantId, projectId: shop }));
    expect(own.code).toBe("NOT_FOUND");
    const acme = await rejection(outsider.projects.releases({ tenantId: ACME.tenantId, projectId: shop }));
    expect(acme.code).toBe("FORBIDDEN");
    const loner = await rejection(
      callerAs(t.db, LONER_EMAIL).projects.releases({ tenantId: ACME.tenantId, projectId: shop }),
    );
    expect(loner.code).toBe("FORBIDDEN");
    // The outsider's own project answers, with only its own release.
    const mine = await outsider.projects.releases({ tenantId: OTHER.tenantId, projectId: secret });
    expect(mine.releases.map((r) => r.id)).toEqual([`rel_${secret}_1`]);
  });
});

describe("projects.setReleaseTarget", () => {
  const below: Role[] = ["viewer", "member", "approver", "operator"];

  it.each(below)("refuses a %s with FORBIDDEN and writes nothing", async (role) => {
    const before = await projectsRows();
    const err = await rejection(
      callerAs(t.db, emailFor(role)).projects.setReleaseTarget({
        tenantId: ACME.tenantId,
        projectId: shop,
        target: { kind: "none" },
      }),
    );
    expect(err.code).toBe("FORBIDDEN");
    expect(await projectsRows()).toEqual(before);
  });

  it("refuses another tenant's project with NOT_FOUND (FORBIDDEN in a tenant the caller is not in), writing nothing", async () => {
    const before = await projectsRows();
    const outsider = callerAs(t.db, OUTSIDER_EMAIL);
    const target = { kind: "webhook" as const, url: "https://evil.example.com/" };
    expect(
      (await rejection(outsider.projects.setReleaseTarget({ tenantId: OTHER.tenantId, projectId: shop, target }))).code,
    ).toBe("NOT_FOUND");
    expect(
      (await rejection(outsider.projects.setReleaseTarget({ tenantId: ACME.tenantId, projectId: shop, target }))).code,
    ).toBe("FORBIDDEN");
    expect(await projectsRows()).toEqual(before);
  });

  it("sets a webhook for future promotions only; the same target again writes nothing", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    const target = { kind: "webhook" as const, url: "https://deploy.example.com/hooks/shop" };
    expect(await admin.projects.setReleaseTarget({ tenantId: ACME.tenantId, projectId: blog, target })).toEqual({
      projectId: blog,
      target,
      changed: true,
    });
    const stored = await t.db.project.findUniqueOrThrow({ where: { id: blog } });
    expect(stored.releaseTarget).toEqual(target);

    const before = await projectsRows();
    expect(await admin.projects.setReleaseTarget({ tenantId: ACME.tenantId, projectId: blog, target })).toEqual({
      projectId: blog,
      target,
      changed: false,
    });
    expect(await projectsRows()).toEqual(before);

    // The project's releases keep the target they were started with; the next promotion reads the new one.
    await admin.projects.setReleaseTarget({ tenantId: ACME.tenantId, projectId: shop, target: { kind: "none" } });
    const out = await admin.projects.releases({ tenantId: ACME.tenantId, projectId: shop });
    expect(out.target).toEqual({ kind: "none" });
    expect(out.releases.map((r) => r.target?.kind)).toEqual(["folder", "webhook", "folder"]);
    await admin.projects.setReleaseTarget({ tenantId: ACME.tenantId, projectId: shop, target: { kind: "folder" } });
  });

  it("sets a folder with an absolute path, and back to the default folder without one", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    const custom = { kind: "folder" as const, path: "/srv/releases/blog" };
    expect(
      await admin.projects.setReleaseTarget({ tenantId: ACME.tenantId, projectId: blog, target: custom }),
    ).toMatchObject({ changed: true, target: custom });
    expect(
      await admin.projects.setReleaseTarget({ tenantId: ACME.tenantId, projectId: blog, target: { kind: "folder" } }),
    ).toEqual({ projectId: blog, target: { kind: "folder" }, changed: true });
    expect((await t.db.project.findUniqueOrThrow({ where: { id: blog } })).releaseTarget).toEqual({ kind: "folder" });
  });

  it.each([
    ["a relative folder path", { kind: "folder", path: "releases/shop" }, /absolute folder path/],
    ["an empty folder path", { kind: "folder", path: "" }, /absolute folder path/],
    ["an ftp URL", { kind: "webhook", url: "ftp://files.example.com/drop" }, /http:\/\/ or https:\/\/ URL/],
    ["a URL that is no URL", { kind: "webhook", url: "deploy.example.com" }, /http:\/\/ or https:\/\/ URL/],
    ["a webhook without a URL", { kind: "webhook" }, /http:\/\/ or https:\/\/ URL/],
    ["an unknown kind", { kind: "s3", bucket: "b" }, /kind/],
  ])("refuses %s with BAD_REQUEST saying what to give, before reading any project", async (_, target, message) => {
    const { db, touched } = recordingDb(t.db);
    const caller = createCaller(
      createContext({ db, headers: new Headers(), localUserEmail: emailFor("admin"), services: testServices() }),
    );
    const before = await projectsRows();
    const err = await rejection(
      caller.projects.setReleaseTarget({ tenantId: ACME.tenantId, projectId: shop, target: target as never }),
    );
    expect(err.code).toBe("BAD_REQUEST");
    expect(err.message).toMatch(message);
    expect(touched).not.toContain("project");
    expect(await projectsRows()).toEqual(before);
  });

  it("refuses an archived project with PRECONDITION_FAILED", async () => {
    const before = await projectsRows();
    const err = await rejection(
      callerAs(t.db, emailFor("admin")).projects.setReleaseTarget({
        tenantId: ACME.tenantId,
        projectId: archived,
        target: { kind: "none" },
      }),
    );
    expect(err.code).toBe("PRECONDITION_FAILED");
    expect(err.message).toMatch(/archived/);
    expect(await projectsRows()).toEqual(before);
  });
});

describe("projects.indexes", () => {
  it("shows a viewer the index builds latest first, with a failure's error", async () => {
    const viewer = callerAs(t.db, emailFor("viewer"));
    const rows = await viewer.projects.indexes({ tenantId: ACME.tenantId, projectId: shop });
    expect(rows.map((r) => [r.generation, r.status, r.tree, r.files])).toEqual([
      [2, "built", TREE2, 3],
      [1, "built", TREE1, 1],
    ]);
    expect(await viewer.projects.indexes({ tenantId: ACME.tenantId, projectId: broken })).toEqual([
      expect.objectContaining({ generation: 1, status: "failed", error: "main is at 0123abc which is no generation" }),
    ]);
    expect(await viewer.projects.indexes({ tenantId: ACME.tenantId, projectId: blog })).toEqual([]);
  });

  it("answers another tenant's project with NOT_FOUND and a non-member with FORBIDDEN", async () => {
    const outsider = callerAs(t.db, OUTSIDER_EMAIL);
    expect((await rejection(outsider.projects.indexes({ tenantId: OTHER.tenantId, projectId: shop }))).code).toBe(
      "NOT_FOUND",
    );
    expect((await rejection(outsider.projects.indexes({ tenantId: ACME.tenantId, projectId: shop }))).code).toBe(
      "FORBIDDEN",
    );
  });
});

describe("projects.search", () => {
  it.each(ROLES)("finds path:line hits in the newest built index for a %s", async (role) => {
    const caller = callerWithBlobs(emailFor(role));
    expect(await caller.projects.search({ tenantId: ACME.tenantId, projectId: shop, query: "addToCart" })).toEqual({
      indexed: true,
      generation: 2,
      tree: TREE2,
      total: 1,
      hits: [{ path: "src/cart.ts", line: 2 }],
    });
  });

  it("matches prefixes and every word of the query, and caps the hits at the limit", async () => {
    const viewer = callerWithBlobs(emailFor("viewer"));
    const search = (query: string, limit?: number) =>
      viewer.projects.search({ tenantId: ACME.tenantId, projectId: shop, query, ...(limit ? { limit } : {}) });
    const cart = await search("cart");
    expect(cart).toMatchObject({ indexed: true, total: 4 });
    expect(cart.indexed && cart.hits).toEqual([
      { path: "README.md", line: 3 },
      { path: "src/cart.ts", line: 1 },
      { path: "src/cart.ts", line: 2 },
      { path: "src/wishlist.ts", line: 2 },
    ]);
    expect(await search("return item")).toMatchObject({ hits: [{ path: "src/cart.ts", line: 3 }] });
    expect(await search("  nothingmatches  ")).toMatchObject({ indexed: true, total: 0, hits: [] });
    expect(await search("cart", 2)).toMatchObject({ total: 4, hits: [{ path: "README.md" }, { path: "src/cart.ts" }] });
  });

  it("says why there is nothing to search: never built, the last build failed, or purged", async () => {
    const viewer = callerWithBlobs(emailFor("viewer"));
    const search = (projectId: string) => viewer.projects.search({ tenantId: ACME.tenantId, projectId, query: "cart" });
    expect(await search(blog)).toEqual({
      indexed: false,
      message: "No search index yet: the index is built after each promotion.",
    });
    expect(await search(broken)).toEqual({
      indexed: false,
      message: "No search index: the last build (S1) failed: main is at 0123abc which is no generation",
    });
    expect(await search(archived)).toMatchObject({ indexed: false, message: expect.stringMatching(/archived/) });
    // A built row whose blob this server cannot read (another blob store) is not an empty result.
    const other = createCaller(
      createContext({
        db: t.db,
        headers: new Headers(),
        localUserEmail: emailFor("viewer"),
        services: { ...testServices(), blobs: localFolderBlobStore(join(root, "empty")) },
      }),
    );
    expect(await other.projects.search({ tenantId: ACME.tenantId, projectId: shop, query: "cart" })).toEqual({
      indexed: false,
      message: "The search index of S2 is not readable from this server.",
    });
  });

  it.each([
    ["empty", ""],
    ["only spaces", "   "],
    ["longer than 200 characters", "x".repeat(201)],
  ])("refuses a query that is %s with BAD_REQUEST, before reading any project or index", async (_, query) => {
    const { db, touched } = recordingDb(t.db);
    const err = await rejection(
      callerWithBlobs(emailFor("admin"), db).projects.search({ tenantId: ACME.tenantId, projectId: shop, query }),
    );
    expect(err.code).toBe("BAD_REQUEST");
    expect(touched).not.toContain("project");
    expect(touched).not.toContain("projectIndex");
  });

  it("answers another tenant's project with NOT_FOUND (never its hits) and a non-member with FORBIDDEN", async () => {
    const outsider = callerWithBlobs(OUTSIDER_EMAIL);
    const own = await rejection(outsider.projects.search({ tenantId: OTHER.tenantId, projectId: shop, query: "cart" }));
    expect(own.code).toBe("NOT_FOUND");
    const acme = await rejection(outsider.projects.search({ tenantId: ACME.tenantId, projectId: shop, query: "cart" }));
    expect(acme.code).toBe("FORBIDDEN");
    // Acme's admin cannot search the other tenant's project from Acme.
    const admin = callerWithBlobs(emailFor("admin"));
    const cross = await rejection(
      admin.projects.search({ tenantId: ACME.tenantId, projectId: secret, query: "addToCart" }),
    );
    expect(cross.code).toBe("NOT_FOUND");
    expect(
      await outsider.projects.search({ tenantId: OTHER.tenantId, projectId: secret, query: "addToCart" }),
    ).toMatchObject({
      indexed: true,
      hits: [{ path: "secret.ts", line: 1 }],
    });
  });
});
