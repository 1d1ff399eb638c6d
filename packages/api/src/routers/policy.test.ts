import { defaultPolicyDocument, loadConfig } from "@rhumbatron/core";
import { createApiToken } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { handleTrpcRequest } from "../http.ts";
import { callerAs, emailFor, OUTSIDER_EMAIL, rejection, seedTenants, tableFingerprint } from "../testing/fixtures.ts";
import { testServices } from "../testing/services.ts";

/** policy.get, policy.history and policy.update through the router, as each role calls them. */
const t = useTestDatabase();
const ACME = "ten_acme";
const SHOP = "proj_00000000-0000-4000-8000-00000000a001";
const BLOG = "proj_00000000-0000-4000-8000-00000000a002";
const defaults = defaultPolicyDocument(loadConfig("dev"));

let adminToken = "";

beforeAll(async () => {
  await seedTenants(t.db);
  const token = { tenantId: ACME, userId: "usr_acme_admin", name: "policy", role: "admin" as const };
  adminToken = (await createApiToken(t.db, token, new Date())).secret;
});

const as = (role: "viewer" | "member" | "approver" | "operator" | "admin") => callerAs(t.db, emailFor(role));

/** policy.update over the real HTTP handler as Acme's admin (a token): the status and the message a client shows. */
async function updateOverHttp(input: unknown): Promise<{ status: number; message: string }> {
  const req = new Request("http://localhost/api/trpc/policy.update", {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ json: input }),
  });
  const res = await handleTrpcRequest(req, { db: () => t.db, services: testServices });
  const body = (await res.json()) as { error: { json: { message: string } } };
  return { status: res.status, message: body.error.json.message };
}

describe("the policy router", () => {
  it("lets every member read version 1, the defaults, and its history, writing nothing", async () => {
    const before = await tableFingerprint(t.db);
    const active = await as("viewer").policy.get({ tenantId: ACME, projectId: BLOG });
    expect(active).toMatchObject({ projectId: BLOG, policyId: "policy-1", version: 1, implicit: true });
    expect(active.document).toEqual(defaults);
    const history = await as("member").policy.history({ tenantId: ACME, projectId: BLOG });
    expect(history.map((v) => v.version)).toEqual([1]);
    expect(await tableFingerprint(t.db)).toEqual(before);
  });

  it("an admin's edit is version 2, recorded with policy.updated; get and history show it", async () => {
    const document = { ...defaults, humanGateRiskTiers: ["medium", "high", "critical"] as const };
    const r = await as("admin").policy.update({
      tenantId: ACME,
      projectId: SHOP,
      document: { ...document, humanGateRiskTiers: [...document.humanGateRiskTiers] },
      expectedVersion: 1,
    });
    expect(r).toMatchObject({ version: 2, previousVersion: 1, changed: true, changedFields: ["humanGateRiskTiers"] });
    const active = await as("viewer").policy.get({ tenantId: ACME, projectId: SHOP });
    expect(active).toMatchObject({ version: 2, implicit: false, createdBy: "usr_acme_admin" });
    expect(active.document.humanGateRiskTiers).toEqual(["medium", "high", "critical"]);
    const history = await as("viewer").policy.history({ tenantId: ACME, projectId: SHOP });
    expect(history.map((v) => [v.version, v.createdBy])).toEqual([
      [2, "usr_acme_admin"],
      [1, null],
    ]);
    const events = await t.db.outboxRow.findMany({ where: { projectId: SHOP, eventType: "policy.updated" } });
    expect(events.map((e) => (e.envelope as { payload: unknown }).payload)).toEqual([
      { policyId: "policy-1", version: 2, previousVersion: 1, changed: ["humanGateRiskTiers"] },
    ]);

    // An edit made from version 1 now is stale: CONFLICT, nothing written.
    const before = await tableFingerprint(t.db);
    const stale = await rejection(
      as("admin").policy.update({ tenantId: ACME, projectId: SHOP, document: defaults, expectedVersion: 1 }),
    );
    expect(stale.code).toBe("CONFLICT");
    expect(stale.message).toBe(
      "the policy is at version 2, not 1: another edit landed first; reload it and edit again",
    );
    expect(await tableFingerprint(t.db)).toEqual(before);
  });

  it("refuses a bad document with a 400 whose message names the wrong field, writing nothing", async () => {
    const before = await tableFingerprint(t.db);
    const bad = { ...defaults, timeoutSeconds: { ...defaults.timeoutSeconds, security: 5000 } };
    const slow = await updateOverHttp({ tenantId: ACME, projectId: BLOG, document: bad });
    expect(slow.status).toBe(400);
    expect(slow.message).toBe("✖ at most 900 s, the Candidate's reservation\n  → at document.timeoutSeconds.security");
    const tier = { ...defaults, requiredChecksByRisk: { ...defaults.requiredChecksByRisk, hihg: ["build"] } };
    const misspelt = await updateOverHttp({ tenantId: ACME, projectId: BLOG, document: tier });
    expect(misspelt.status).toBe(400);
    expect(misspelt.message).toBe(
      "✖ hihg is not a risk tier: give one of low, medium, high, critical\n  → at document.requiredChecksByRisk",
    );
    expect(await tableFingerprint(t.db)).toEqual(before);
  });

  it("refuses everyone below admin, and another tenant, writing nothing", async () => {
    const before = await tableFingerprint(t.db);
    const input = { tenantId: ACME, projectId: BLOG, document: { ...defaults, rerunBudget: 9 } };
    for (const role of ["viewer", "member", "approver", "operator"] as const) {
      const err = await rejection(as(role).policy.update(input));
      expect(err.code, role).toBe("FORBIDDEN");
    }
    const outsider = callerAs(t.db, OUTSIDER_EMAIL);
    expect((await rejection(outsider.policy.update(input))).code).toBe("FORBIDDEN");
    const fromOwnTenant = outsider.policy.get({ tenantId: "ten_other", projectId: BLOG });
    expect((await rejection(fromOwnTenant)).code).toBe("NOT_FOUND");
    expect(await tableFingerprint(t.db)).toEqual(before);
  });
});
