import { defaultPolicyDocument, loadConfig } from "@rhumbatron/core";
import type { Role } from "@rhumbatron/db";
import { createApiToken, revokeApiToken, setTenantSecret } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { ROLE_ORDER, roleRank } from "./roles.ts";
import { appRouter, createCaller } from "./routers/_app.ts";
import {
  ACME,
  emailFor,
  OTHER,
  OUTSIDER_EMAIL,
  seedProcedureRows,
  seedTenants,
  tableFingerprint,
} from "./testing/fixtures.ts";
import { testServices } from "./testing/services.ts";
import { type Context, createContext } from "./trpc.ts";

/**
 * The authorization matrix: every procedure of the app router, called by everyone who must be
 * refused. A procedure without an entry in SAMPLES fails this file, so a new procedure cannot ship
 * without saying who may call it and being checked against everyone else. The minimum role is
 * checked from both sides: every role below it is refused by the role check itself (FORBIDDEN,
 * before the procedure reads anything), and the minimum role's call gets past the procedure's own
 * lookups too, since a NOT_FOUND there is also how a procedure hides a row from a caller.
 */
const t = useTestDatabase();

const SHOP = "proj_00000000-0000-4000-8000-00000000a001";
const BLOG = "proj_00000000-0000-4000-8000-00000000a002";
const CHANGE = "chg_authz";
const CHANGESET = "cs_authz";
const CANDIDATE = "cand_0000000000000000000000000000a17a";
const TREE = "a".repeat(40);
const EXTRA_MEMBER = "usr_authz_extra";

type Sample =
  /** Acts on the caller only (no tenant): refused without credentials. */
  | { scope: "user"; input?: Record<string, unknown> }
  | {
      scope: "tenant";
      /** The lowest role the procedure admits. */
      minimum: Role;
      /** The input besides tenantId, naming Acme's rows. */
      input: Record<string, unknown>;
      /** The input names one of Acme's resources: another tenant naming it from its own tenant is refused too. */
      acmeResource?: true;
      /**
       * The answer at the minimum role when the seeded rows' state refuses the action: the procedure
       * found the row and then refused, past the role check. Without it the call must succeed.
       */
      atMinimum?: "PRECONDITION_FAILED";
    };

// A plausible input for every procedure. Resource IDs refer to the rows beforeAll seeds in Acme.
const SAMPLES: Record<string, Sample> = {
  "tenants.mine": { scope: "user" },
  "projects.list": { scope: "tenant", minimum: "viewer", input: {} },
  "projects.create": { scope: "tenant", minimum: "admin", input: { name: "authz-new" } },
  "projects.import": {
    scope: "tenant",
    minimum: "admin",
    input: { name: "authz-imported", from: "https://git.example.com/team/shop.git", branch: "main" },
  },
  "projects.createForPush": { scope: "tenant", minimum: "admin", input: { name: "authz-pushed" } },
  // The seeded project is still provisioning, not waiting for a push.
  "projects.pushAccess": {
    scope: "tenant",
    minimum: "admin",
    input: { projectId: BLOG },
    acmeResource: true,
    atMinimum: "PRECONDITION_FAILED",
  },
  // The seeded project is still provisioning.
  "projects.archive": {
    scope: "tenant",
    minimum: "admin",
    input: { projectId: BLOG },
    acmeResource: true,
    atMinimum: "PRECONDITION_FAILED",
  },
  "projects.overview": { scope: "tenant", minimum: "viewer", input: { projectId: SHOP }, acmeResource: true },
  "projects.checks": { scope: "tenant", minimum: "viewer", input: { projectId: SHOP }, acmeResource: true },
  "projects.events": { scope: "tenant", minimum: "viewer", input: { projectId: SHOP }, acmeResource: true },
  "projects.cloneAccess": { scope: "tenant", minimum: "viewer", input: { projectId: SHOP }, acmeResource: true },
  "projects.releases": { scope: "tenant", minimum: "viewer", input: { projectId: SHOP }, acmeResource: true },
  "projects.setReleaseTarget": {
    scope: "tenant",
    minimum: "admin",
    input: { projectId: SHOP, target: { kind: "webhook", url: "https://deploy.example.com/hook" } },
    acmeResource: true,
  },
  "projects.setAgent": {
    scope: "tenant",
    minimum: "admin",
    input: { projectId: SHOP, agent: { kind: "command", argv: ["sh", "agent.sh"] } },
    acmeResource: true,
  },
  "projects.indexes": { scope: "tenant", minimum: "viewer", input: { projectId: SHOP }, acmeResource: true },
  "projects.search": {
    scope: "tenant",
    minimum: "viewer",
    input: { projectId: SHOP, query: "cart" },
    acmeResource: true,
  },
  "operations.outbox": { scope: "tenant", minimum: "operator", input: { state: "failed" } },
  "operations.outboxCounts": { scope: "tenant", minimum: "operator", input: {} },
  "operations.queues": { scope: "tenant", minimum: "operator", input: {} },
  "operations.streamLag": { scope: "tenant", minimum: "operator", input: {} },
  "operations.meters": { scope: "tenant", minimum: "operator", input: {} },
  "operations.deadLetters": { scope: "tenant", minimum: "operator", input: {} },
  "operations.retryDeadLetter": {
    scope: "tenant",
    minimum: "operator",
    input: { deadLetterId: "dl_cmd_authz1" },
    acmeResource: true,
  },
  "operations.dismissDeadLetter": {
    scope: "tenant",
    minimum: "operator",
    input: { deadLetterId: "dl_cmd_authz2", reason: "seen it" },
    acmeResource: true,
  },
  "change.create": {
    scope: "tenant",
    minimum: "member",
    input: {
      projectId: SHOP,
      clientRequestId: "authz-1",
      change: { title: "Add a wishlist", riskTier: "low", tasks: [{ key: "a", title: "Model" }] },
    },
    acmeResource: true,
  },
  "change.get": { scope: "tenant", minimum: "viewer", input: { changeId: CHANGE }, acmeResource: true },
  "change.list": { scope: "tenant", minimum: "viewer", input: { projectId: SHOP }, acmeResource: true },
  "change.changeSets": { scope: "tenant", minimum: "viewer", input: { changeId: CHANGE }, acmeResource: true },
  "change.candidates": { scope: "tenant", minimum: "viewer", input: { changeId: CHANGE }, acmeResource: true },
  "change.patch": { scope: "tenant", minimum: "viewer", input: { changeSetId: CHANGESET }, acmeResource: true },
  "change.contextPacket": { scope: "tenant", minimum: "viewer", input: { runId: "run_authz" }, acmeResource: true },
  "change.cancel": {
    scope: "tenant",
    minimum: "member",
    input: { changeId: CHANGE, reason: "not needed" },
    acmeResource: true,
  },
  "change.attempts": { scope: "tenant", minimum: "viewer", input: { changeId: CHANGE }, acmeResource: true },
  // The seeded Change asked for no attempts: nothing to pick.
  "change.pickAttempt": {
    scope: "tenant",
    minimum: "approver",
    input: { changeId: CHANGE, attempt: 2 },
    acmeResource: true,
    atMinimum: "PRECONDITION_FAILED",
  },
  "change.setLanding": {
    scope: "tenant",
    minimum: "member",
    input: { changeId: CHANGE, landWhenReady: true },
    acmeResource: true,
  },
  // The seeded Task is completed: nothing to retry, and its ChangeSet is published already.
  "task.retry": {
    scope: "tenant",
    minimum: "member",
    input: { taskId: "task_authz" },
    acmeResource: true,
    atMinimum: "PRECONDITION_FAILED",
  },
  "task.publishFixture": {
    scope: "tenant",
    minimum: "member",
    input: { taskId: "task_authz", summary: "Fix the cart", files: [{ path: "public/cart.js", content: "ok\n" }] },
    acmeResource: true,
    atMinimum: "PRECONDITION_FAILED",
  },
  "landing.queue": { scope: "tenant", minimum: "viewer", input: { projectId: SHOP }, acmeResource: true },
  "landing.status": { scope: "tenant", minimum: "viewer", input: { projectId: SHOP }, acmeResource: true },
  // The seeded Change does not land when ready: not in the queue.
  "landing.setPriority": {
    scope: "tenant",
    minimum: "admin",
    input: { changeId: CHANGE, priority: "front" },
    acmeResource: true,
    atMinimum: "PRECONDITION_FAILED",
  },
  "landing.setState": {
    scope: "tenant",
    minimum: "admin",
    input: { projectId: SHOP, state: "running" },
    acmeResource: true,
  },
  "tests.list": { scope: "tenant", minimum: "viewer", input: { projectId: SHOP }, acmeResource: true },
  // The seeded test (seedProcedureRows) is flaky and not quarantined.
  "tests.quarantine": {
    scope: "tenant",
    minimum: "admin",
    input: { projectId: SHOP, checkId: "unit", testId: "cart > adds", reason: "flaky since the clock change" },
    acmeResource: true,
  },
  "tests.release": {
    scope: "tenant",
    minimum: "admin",
    input: { projectId: SHOP, checkId: "unit", testId: "cart > adds" },
    acmeResource: true,
  },
  "task.list": { scope: "tenant", minimum: "viewer", input: { changeId: CHANGE }, acmeResource: true },
  "task.transcript": { scope: "tenant", minimum: "viewer", input: { taskId: "task_authz" }, acmeResource: true },
  "candidate.list": { scope: "tenant", minimum: "viewer", input: { projectId: SHOP }, acmeResource: true },
  "candidate.get": { scope: "tenant", minimum: "viewer", input: { candidateId: CANDIDATE }, acmeResource: true },
  "candidate.patch": { scope: "tenant", minimum: "viewer", input: { candidateId: CANDIDATE }, acmeResource: true },
  "candidate.interdiff": { scope: "tenant", minimum: "viewer", input: { candidateId: CANDIDATE }, acmeResource: true },
  "candidate.checks": { scope: "tenant", minimum: "viewer", input: { candidateId: CANDIDATE }, acmeResource: true },
  // The seeded Candidate is verified and needs no approval.
  "candidate.approve": {
    scope: "tenant",
    minimum: "approver",
    input: { candidateId: CANDIDATE, treeHash: TREE },
    acmeResource: true,
    atMinimum: "PRECONDITION_FAILED",
  },
  "candidate.reject": {
    scope: "tenant",
    minimum: "approver",
    input: { candidateId: CANDIDATE, treeHash: TREE, note: "no" },
    acmeResource: true,
    atMinimum: "PRECONDITION_FAILED",
  },
  "candidate.promote": { scope: "tenant", minimum: "approver", input: { candidateId: CANDIDATE }, acmeResource: true },
  // Only a rejected Candidate's checks can be rerun; the seeded one is verified.
  "candidate.rerunCheck": {
    scope: "tenant",
    minimum: "member",
    input: { candidateId: CANDIDATE, checkId: "unit" },
    acmeResource: true,
    atMinimum: "PRECONDITION_FAILED",
  },
  "tokens.create": { scope: "tenant", minimum: "viewer", input: { name: "authz", role: "viewer" } },
  "tokens.list": { scope: "tenant", minimum: "viewer", input: {} },
  // The token ID is filled in by beforeAll: the Acme viewer's own token, the only kind a viewer may revoke.
  "tokens.revoke": { scope: "tenant", minimum: "viewer", input: { tokenId: "" }, acmeResource: true },
  "members.list": { scope: "tenant", minimum: "admin", input: {} },
  "members.add": {
    scope: "tenant",
    minimum: "admin",
    input: { email: "authz-new@acme.test", name: "New", role: "viewer" },
  },
  // An Acme member seeded by beforeAll only for these three, so the call at the minimum role changes nobody else.
  "members.setRole": {
    scope: "tenant",
    minimum: "admin",
    input: { userId: EXTRA_MEMBER, role: "approver" },
    acmeResource: true,
  },
  "members.resetPassword": {
    scope: "tenant",
    minimum: "admin",
    input: { userId: EXTRA_MEMBER },
    acmeResource: true,
  },
  "members.remove": { scope: "tenant", minimum: "admin", input: { userId: EXTRA_MEMBER }, acmeResource: true },
  "metrics.series": { scope: "tenant", minimum: "viewer", input: { range: "7d", bucket: "day" } },
  "metrics.lag": { scope: "tenant", minimum: "viewer", input: {} },
  "metrics.landing": { scope: "tenant", minimum: "viewer", input: { range: "7d", bucket: "day" } },
  "metrics.checks": { scope: "tenant", minimum: "viewer", input: { range: "7d", bucket: "day" } },
  "metrics.sandbox": { scope: "tenant", minimum: "viewer", input: { range: "7d", bucket: "day" } },
  "sandbox.meter": { scope: "tenant", minimum: "viewer", input: {} },
  "sandbox.setBudget": { scope: "tenant", minimum: "admin", input: { monthlySeconds: 72_000 } },
  // Tenant secrets: admins only. beforeAll sets AUTHZ_GONE_KEY for the delete at the minimum role.
  "secrets.list": { scope: "tenant", minimum: "admin", input: {} },
  "secrets.set": { scope: "tenant", minimum: "admin", input: { name: "AUTHZ_KEY", value: "sk-authz-value" } },
  "secrets.delete": { scope: "tenant", minimum: "admin", input: { name: "AUTHZ_GONE_KEY" } },
  "policy.get": { scope: "tenant", minimum: "viewer", input: { projectId: SHOP }, acmeResource: true },
  "policy.history": { scope: "tenant", minimum: "viewer", input: { projectId: SHOP }, acmeResource: true },
  // The defaults with the rerun budget raised: at the minimum role it makes version 2.
  "policy.update": {
    scope: "tenant",
    minimum: "admin",
    input: { projectId: SHOP, document: { ...defaultPolicyDocument(loadConfig("dev")), rerunBudget: 3 } },
    acmeResource: true,
  },
  // Everyone has an inbox; each call reads or marks the caller's own notifications (the viewer's is seeded).
  "notifications.list": { scope: "tenant", minimum: "viewer", input: { unreadOnly: true } },
  "notifications.unreadCount": { scope: "tenant", minimum: "viewer", input: {} },
  "notifications.markRead": {
    scope: "tenant",
    minimum: "viewer",
    input: { notificationId: "ntf_authz" },
    acmeResource: true,
  },
  // Webhooks point a project's Events at a URL: admins only.
  "webhooks.list": { scope: "tenant", minimum: "admin", input: { projectId: SHOP }, acmeResource: true },
  "webhooks.create": {
    scope: "tenant",
    minimum: "admin",
    input: { projectId: SHOP, url: "https://hooks.example.com/authz", eventTypes: ["approval.requested"] },
    acmeResource: true,
  },
  "webhooks.update": {
    scope: "tenant",
    minimum: "admin",
    input: {
      webhookId: "whk_authz",
      url: "https://hooks.example.com/authz-moved",
      eventTypes: ["canonical.advanced"],
      paused: true,
    },
    acmeResource: true,
  },
  "webhooks.remove": { scope: "tenant", minimum: "admin", input: { webhookId: "whk_authz_gone" }, acmeResource: true },
  "webhooks.deliveries": { scope: "tenant", minimum: "admin", input: { webhookId: "whk_authz" }, acmeResource: true },
  "webhooks.redeliver": { scope: "tenant", minimum: "admin", input: { deliveryId: "whd_authz" }, acmeResource: true },
};

const PROCEDURES = Object.keys(appRouter._def.procedures);
/** Another tenant: no membership here (FORBIDDEN), or, from its own tenant, no such row there (NOT_FOUND). */
const REFUSED = ["FORBIDDEN", "NOT_FOUND"];

/** Secrets of the Acme admin's tokens, one per role below admin, and a revoked admin token. */
const adminTokenAs: Partial<Record<Role, string>> = {};
let revokedAdminToken = "";

beforeAll(async () => {
  await seedTenants(t.db);
  const now = new Date();
  await seedProcedureRows(t.db, {
    tag: "authz",
    projectId: SHOP,
    changeId: CHANGE,
    changeSetId: CHANGESET,
    candidateId: CANDIDATE,
    tree: TREE,
    extraMember: EXTRA_MEMBER,
  });
  const viewerToken = await createApiToken(
    t.db,
    { tenantId: ACME.tenantId, userId: "usr_acme_viewer", name: "viewer's", role: "viewer" },
    now,
  );
  await setTenantSecret(
    t.db,
    { tenantId: ACME.tenantId, name: "AUTHZ_GONE_KEY", value: "sk-authz-gone", userId: "usr_acme_admin" },
    { authSecret: testServices().credentialSecret, now },
  );
  const revoke = SAMPLES["tokens.revoke"];
  if (revoke?.scope === "tenant") revoke.input.tokenId = viewerToken.token.id;
  for (const role of ROLE_ORDER.filter((r) => r !== "admin")) {
    adminTokenAs[role] = (
      await createApiToken(t.db, { tenantId: ACME.tenantId, userId: "usr_acme_admin", name: role, role }, now)
    ).secret;
  }
  const revoked = await createApiToken(
    t.db,
    { tenantId: ACME.tenantId, userId: "usr_acme_admin", name: "revoked", role: "admin" },
    now,
  );
  await revokeApiToken(t.db, { tenantId: ACME.tenantId, tokenId: revoked.token.id, userId: null }, now);
  revokedAdminToken = revoked.secret;
});

/** Row count and a content hash of every table (a token's last_used_at left out: presenting a token is not a write). */
const fingerprint = () => tableFingerprint(t.db);

const asUser = (email: string) =>
  createContext({ db: t.db, headers: new Headers(), localUserEmail: email, services: testServices() });
const withHeaders = (headers: Record<string, string>) =>
  createContext({ db: t.db, headers: new Headers(headers), services: testServices() });
const withToken = (secret: string) => withHeaders({ authorization: `Bearer ${secret}` });

/** Calls one procedure by its path; "ok" or the tRPC error code. A subscription is closed at once. */
async function call(ctx: Context, path: string, input: unknown): Promise<string> {
  let node: unknown = createCaller(ctx);
  for (const key of path.split(".")) node = (node as Record<string, unknown>)[key];
  try {
    const out = await (node as (input: unknown) => Promise<unknown>)(input);
    if (out && typeof out === "object" && Symbol.asyncIterator in out) {
      await (out as AsyncIterable<unknown>)[Symbol.asyncIterator]().return?.();
    }
    return "ok";
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

/** The call is refused with one of `codes`, and not one row of any table changed. */
async function expectRefused(who: string, ctx: Context, path: string, input: unknown, codes: string[]) {
  const before = await fingerprint();
  const outcome = await call(ctx, path, input);
  expect(codes, `${who} calling ${path} got ${outcome}`).toContain(outcome);
  expect(await fingerprint(), `${who} calling ${path} changed the database`).toEqual(before);
}

describe("the authorization matrix", () => {
  it("has a sample input and a minimum role for every procedure of the app router, and none for others", () => {
    expect(
      PROCEDURES.filter((p) => !(p in SAMPLES)),
      "procedures without an entry in SAMPLES (add one: who may call it, and a plausible input)",
    ).toEqual([]);
    expect(
      Object.keys(SAMPLES).filter((p) => !PROCEDURES.includes(p)),
      "entries for procedures that no longer exist",
    ).toEqual([]);
  });

  it.each(PROCEDURES.filter((p) => SAMPLES[p]?.scope === "user"))(
    "%s refuses a caller without credentials",
    async (path) => {
      const sample = SAMPLES[path] as Extract<Sample, { scope: "user" }>;
      await expectRefused("nobody", withHeaders({}), path, sample.input, ["UNAUTHORIZED"]);
      await expectRefused("a revoked token", withToken(revokedAdminToken), path, sample.input, ["UNAUTHORIZED"]);
    },
  );

  it.each(PROCEDURES.filter((p) => SAMPLES[p]?.scope === "tenant"))(
    "%s refuses everyone below its minimum role, and lets that role through",
    async (path) => {
      const sample = SAMPLES[path] as Extract<Sample, { scope: "tenant" }>;
      const input = { tenantId: ACME.tenantId, ...sample.input };

      await expectRefused("nobody", withHeaders({}), path, input, ["UNAUTHORIZED"]);
      await expectRefused(
        "a forged session cookie",
        withHeaders({ cookie: "better-auth.session_token=x.y" }),
        path,
        input,
        ["UNAUTHORIZED"],
      );
      await expectRefused("a revoked admin token", withToken(revokedAdminToken), path, input, ["UNAUTHORIZED"]);
      await expectRefused("another tenant's admin", asUser(OUTSIDER_EMAIL), path, input, REFUSED);
      if (sample.acmeResource) {
        const fromOther = { ...input, tenantId: OTHER.tenantId };
        await expectRefused(
          "another tenant's admin, in its own tenant",
          asUser(OUTSIDER_EMAIL),
          path,
          fromOther,
          REFUSED,
        );
      }
      // Refused by the role check, not by a lookup: a NOT_FOUND here could come from a procedure
      // that let the role in and then found nothing, which says nothing about the minimum.
      for (const role of ROLE_ORDER.filter((r) => roleRank(r) < roleRank(sample.minimum))) {
        await expectRefused(`an Acme ${role}`, asUser(emailFor(role)), path, input, ["FORBIDDEN"]);
        await expectRefused(`the Acme admin's ${role} token`, withToken(adminTokenAs[role] ?? ""), path, input, [
          "FORBIDDEN",
        ]);
      }

      // The minimum in SAMPLES is the real one: at that role the call does what it is for, or meets
      // the state refusal its entry names. Never NOT_FOUND: that is also how a procedure hides a row
      // from a caller it lets in (another's token, another tenant's project), so it proves no access.
      const atMinimum = await call(asUser(emailFor(sample.minimum)), path, input);
      expect(atMinimum, `an Acme ${sample.minimum} calling ${path}`).toBe(sample.atMinimum ?? "ok");
    },
  );
});

describe("API tokens in the matrix", () => {
  it("a viewer token of an admin cannot do admin things, but can do what a viewer can", async () => {
    const viewerToken = adminTokenAs.viewer ?? "";
    await expectRefused(
      "an admin's viewer token",
      withToken(viewerToken),
      "projects.create",
      {
        tenantId: ACME.tenantId,
        name: "by-token",
      },
      ["FORBIDDEN"],
    );
    await expectRefused(
      "an admin's viewer token",
      withToken(viewerToken),
      "tokens.create",
      {
        tenantId: ACME.tenantId,
        name: "escalate",
        role: "admin",
      },
      ["FORBIDDEN"],
    );
    expect(await call(withToken(viewerToken), "projects.list", { tenantId: ACME.tenantId })).toBe("ok");
    const caller = createCaller(withToken(viewerToken));
    expect(await caller.tenants.mine()).toEqual([
      { tenantId: ACME.tenantId, slug: "acme", name: ACME.name, role: "viewer" },
    ]);
    // An admin's token lists only the tokens its capped role may see: its own user's.
    const listed = await createCaller(withToken(viewerToken)).tokens.list({ tenantId: ACME.tenantId });
    expect(new Set(listed.map((x) => x.userId))).toEqual(new Set(["usr_acme_admin"]));
  });
});
