import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { authFor, emailFor, LONER_EMAIL, OUTSIDER_EMAIL, recordingDb, seedTenants } from "@rhumbatron/api/testing";
import { localFolderBlobStore } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blobContentType, projectOfBlobKey, serveBlob } from "./blob-route.ts";

const t = useTestDatabase();
const shop = "proj_00000000-0000-4000-8000-00000000a001";
const secret = "proj_00000000-0000-4000-8000-00000000b001";
let root: string;
const blobs = () => localFolderBlobStore(join(root, "blobs"));
const get = (segments: string[], email: string, db = t.db) =>
  serveBlob(new Request(`http://localhost/api/blobs/${segments.join("/")}`), segments, {
    db,
    blobs: blobs(),
    auth: authFor,
    localUserEmail: email,
  });
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

beforeAll(async () => {
  await seedTenants(t.db);
  root = await mkdtemp(join(tmpdir(), "rhumbatron-blob-route-"));
  await blobs().put(`evidence/${shop}/cand_1/browser/cart.png`, PNG, { "content-type": "image/png" });
  await blobs().put(`evidence/${shop}/cand_1/build.log`, new TextEncoder().encode("build ok\n"), {});
  await blobs().put(`evidence/${shop}/cand_1/page.html`, new TextEncoder().encode("<script>alert(1)</script>"), {
    contentType: "text/html",
  });
  await blobs().put(`evidence/${secret}/cand_9/build.log`, new TextEncoder().encode("other tenant's log"), {});
  // A file outside the blob root that a traversal would reach.
  await writeFile(join(root, "secret.txt"), "outside");
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("projectOfBlobKey", () => {
  it("names the project of evidence and source keys only", () => {
    expect(projectOfBlobKey(["evidence", shop, "cand_1", "build.log"])).toBe(shop);
    expect(projectOfBlobKey(["source", shop, "patches", "candidates", "cand_1.patch"])).toBe(shop);
    expect(projectOfBlobKey(["events", "2026-01-01", "stream-00", "x.json"])).toBeNull();
    expect(projectOfBlobKey(["evidence", shop])).toBeNull();
  });

  it("refuses traversal and odd segments", () => {
    for (const segments of [
      ["evidence", shop, "..", "..", "secret.txt"],
      ["evidence", "..", "secret.txt"],
      ["evidence", shop, "a/../../secret.txt"],
      ["evidence", shop, "a\\..\\b"],
      ["evidence", shop, "."],
      ["evidence", shop, ""],
      ["evidence", shop, "%2e%2e"],
    ]) {
      expect(projectOfBlobKey(segments), segments.join("|")).toBeNull();
    }
  });

  it("serves only images as what they are; everything else as plain text", () => {
    expect(blobContentType("a/b/c.png")).toBe("image/png");
    expect(blobContentType("a/b/c.html")).toBe("text/plain; charset=utf-8");
    expect(blobContentType("a/b/c.svg")).toBe("text/plain; charset=utf-8");
  });
});

describe("GET /api/blobs/<key>", () => {
  it("serves a screenshot and a log to a viewer of the owning tenant", async () => {
    const png = await get(["evidence", shop, "cand_1", "browser", "cart.png"], emailFor("viewer"));
    expect(png.status).toBe(200);
    expect(png.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await png.arrayBuffer())).toEqual(PNG);
    const log = await get(["evidence", shop, "cand_1", "build.log"], emailFor("viewer"));
    expect(log.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await log.text()).toBe("build ok\n");
    const html = await get(["evidence", shop, "cand_1", "page.html"], emailFor("admin"));
    expect(html.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(html.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("answers 404 for another tenant's key, the same as for a missing blob", async () => {
    const other = await get(["evidence", secret, "cand_9", "build.log"], emailFor("admin"));
    expect(other.status).toBe(404);
    expect(await other.text()).not.toContain("other tenant");
    expect((await get(["evidence", shop, "cand_1", "nope.log"], emailFor("admin"))).status).toBe(404);
    // The other tenant's own member reads it; a member of no tenant reads nothing.
    expect((await get(["evidence", secret, "cand_9", "build.log"], OUTSIDER_EMAIL)).status).toBe(200);
    expect((await get(["evidence", shop, "cand_1", "build.log"], OUTSIDER_EMAIL)).status).toBe(404);
    expect((await get(["evidence", shop, "cand_1", "build.log"], LONER_EMAIL)).status).toBe(404);
    expect((await get(["evidence", shop, "cand_1", "build.log"], "nobody@nowhere.test")).status).toBe(401);
  });

  it("refuses traversal with 400 before reading the database", async () => {
    for (const segments of [
      ["evidence", shop, "..", "..", "secret.txt"],
      ["evidence", shop, "..%2F..%2Fsecret.txt"],
      ["source", "..", "secret.txt"],
      ["secret.txt"],
    ]) {
      const rec = recordingDb(t.db);
      const res = await get(segments, emailFor("admin"), rec.db);
      expect(res.status, segments.join("/")).toBe(400);
      expect(await res.text()).not.toContain("outside");
      expect(rec.touched).toEqual([]);
    }
  });
});
