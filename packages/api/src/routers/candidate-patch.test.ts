import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sourceKeys } from "@rhumbatron/core";
import { localFolderBlobStore } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACME, emailFor, LONER_EMAIL, OTHER, OUTSIDER_EMAIL, recordingDb, seedTenants } from "../testing/fixtures.ts";
import { testServices } from "../testing/services.ts";
import { createContext } from "../trpc.ts";
import { createCaller } from "./_app.ts";

const t = useTestDatabase();
const shop = "proj_00000000-0000-4000-8000-00000000a001";
const composed = "cand_00000000000000000000000000000001";
const fresh = "cand_00000000000000000000000000000002";
let root: string;
const blobs = () => localFolderBlobStore(join(root, "blobs"));
const PATCH = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n";

function callerWithBlobs(email: string, db = t.db) {
  const services = { ...testServices(), blobs: blobs() };
  return createCaller(createContext({ db, headers: new Headers(), localUserEmail: email, services }));
}

beforeAll(async () => {
  await seedTenants(t.db);
  root = await mkdtemp(join(tmpdir(), "rhumbatron-candidate-patch-"));
  await t.db.change.create({
    data: { id: "chg_p", projectId: shop, title: "Patch", riskTier: "low", clientRequestId: "p" },
  });
  for (const [id, key] of [
    [composed, "k1"],
    [fresh, "k2"],
  ] as const) {
    await t.db.candidate.create({
      data: { id, projectId: shop, changeId: "chg_p", compositionKey: key, baseGeneration: 0, baseCommit: "c0" },
    });
  }
  await blobs().put(sourceKeys.candidatePatch(shop, composed), new TextEncoder().encode(PATCH), {
    contentType: "text/x-diff",
    truncated: "true",
    fullSize: "900000",
  });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("candidate.patch", () => {
  it("gives a viewer the stored patch with its truncation, or says it is not stored", async () => {
    const viewer = callerWithBlobs(emailFor("viewer"));
    expect(await viewer.candidate.patch({ tenantId: ACME.tenantId, candidateId: composed })).toEqual({
      key: `source/${shop}/patches/candidates/${composed}.patch`,
      stored: true,
      text: PATCH,
      bytes: PATCH.length,
      truncated: true,
      fullBytes: 900_000,
    });
    expect(await viewer.candidate.patch({ tenantId: ACME.tenantId, candidateId: fresh })).toEqual({
      key: `source/${shop}/patches/candidates/${fresh}.patch`,
      stored: false,
    });
  });

  it("is NOT_FOUND from another tenant and FORBIDDEN outside the tenant, reading nothing", async () => {
    await expect(
      callerWithBlobs(OUTSIDER_EMAIL).candidate.patch({ tenantId: OTHER.tenantId, candidateId: composed }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      callerWithBlobs(emailFor("viewer")).candidate.patch({ tenantId: ACME.tenantId, candidateId: "cand_nope" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    for (const email of [OUTSIDER_EMAIL, LONER_EMAIL]) {
      const rec = recordingDb(t.db);
      await expect(
        callerWithBlobs(email, rec.db).candidate.patch({ tenantId: ACME.tenantId, candidateId: composed }),
      ).rejects.toMatchObject({ code: "FORBIDDEN" });
      expect(rec.touched).not.toContain("candidate");
    }
  });
});
