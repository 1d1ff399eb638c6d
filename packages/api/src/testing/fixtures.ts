import { publicUrl } from "@rhumbatron/core";
import { createApiToken, type Db, type Role } from "@rhumbatron/db";
import { TRPCError } from "@trpc/server";
import { AUTH_BASE_PATH } from "../auth.ts";
import { createCaller } from "../routers/_app.ts";
import { createContext } from "../trpc.ts";
import { authFor, testServices, testSettings } from "./services.ts";

/**
 * Two tenants for router tests: "Acme" with one user per role and two projects, "Other" with one
 * member and one project, and a user who belongs to no tenant.
 */
export const ROLES: Role[] = ["viewer", "member", "approver", "operator", "admin"];

export const ACME = { tenantId: "ten_acme", name: "Acme" } as const;
export const OTHER = { tenantId: "ten_other", name: "Other" } as const;
export const emailFor = (role: Role) => `${role}@acme.test`;
export const OUTSIDER_EMAIL = "member@other.test";
export const LONER_EMAIL = "loner@nowhere.test";

export async function seedTenants(db: Db) {
  await db.tenant.createMany({
    data: [
      { id: ACME.tenantId, slug: "acme", name: ACME.name },
      { id: OTHER.tenantId, slug: "other", name: OTHER.name },
    ],
  });
  for (const role of ROLES) {
    await db.user.create({ data: { id: `usr_acme_${role}`, email: emailFor(role), name: `Acme ${role}` } });
    await db.membership.create({ data: { tenantId: ACME.tenantId, userId: `usr_acme_${role}`, role } });
  }
  await db.user.create({ data: { id: "usr_other", email: OUTSIDER_EMAIL, name: "Other member" } });
  await db.membership.create({ data: { tenantId: OTHER.tenantId, userId: "usr_other", role: "admin" } });
  await db.user.create({ data: { id: "usr_loner", email: LONER_EMAIL, name: "Loner" } });
  await db.project.createMany({
    data: [
      { id: "proj_00000000-0000-4000-8000-00000000a001", tenantId: ACME.tenantId, name: "shop", status: "active" },
      {
        id: "proj_00000000-0000-4000-8000-00000000a002",
        tenantId: ACME.tenantId,
        name: "blog",
        status: "provisioning",
        canonicalGeneration: 3,
      },
      { id: "proj_00000000-0000-4000-8000-00000000b001", tenantId: OTHER.tenantId, name: "secret", status: "active" },
    ],
  });
}

/** The TRPCError a call was refused with (and a test failure if it succeeded or threw something else). */
export async function rejection(promise: Promise<unknown>): Promise<TRPCError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof TRPCError)) throw new Error(`expected a TRPCError, got ${String(err)}`);
  return err;
}

/** A tRPC caller acting as the local user with this email, through the real resolveCaller. */
export function callerAs(db: Db, localUserEmail: string) {
  return createCaller(createContext({ db, headers: new Headers(), localUserEmail, services: testServices() }));
}

/**
 * The real client, with a record of which parts of it were used (`project`, `membership`, `$queryRaw`…),
 * to prove a rejected request read nothing. Not a mock: every call still goes to Postgres.
 */
export function recordingDb(db: Db): { db: Db; touched: string[] } {
  const touched: string[] = [];
  const proxy = new Proxy(db, {
    get(target, prop) {
      if (typeof prop === "string" && prop !== "then") touched.push(prop);
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db: proxy, touched };
}

/** better-auth's endpoint URL on this server (the origin its CSRF check trusts). */
export function authUrl(path: string): string {
  return `${publicUrl(testSettings())}${AUTH_BASE_PATH}${path}`;
}

/** Signs in through better-auth's real HTTP handler, as the browser does; the raw response. */
export function signIn(db: Db, email: string, password: string): Promise<Response> {
  return authFor(db).handler(
    new Request(authUrl("/sign-in/email"), {
      method: "POST",
      headers: { "content-type": "application/json", origin: publicUrl(testSettings()) },
      body: JSON.stringify({ email, password }),
    }),
  );
}

/** The `cookie` request header a browser would send after this sign-in response. */
export function cookieFrom(res: Response): string {
  return res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
}

/** A tRPC caller acting through request headers only (a session cookie, a bearer token, or nothing). */
export function callerWith(db: Db, headers: Record<string, string> = {}) {
  return createCaller(createContext({ db, headers: new Headers(headers), services: testServices() }));
}

/**
 * A fingerprint of every table (row count and a hash of the rows), to prove a refused request wrote
 * nothing. A token's last_used_at is left out: recording that a token was presented is not a write
 * the refused request made to the product's data.
 */
export async function tableFingerprint(db: Db): Promise<Record<string, string>> {
  const tables = await db.$queryRaw<{ tablename: string }[]>`
    SELECT tablename FROM pg_tables
    WHERE schemaname = current_schema() AND tablename <> '_prisma_migrations' ORDER BY tablename`;
  const row = `(to_jsonb(x) - 'last_used_at')::text`;
  const sql = tables
    .map(
      ({ tablename }) =>
        `SELECT '${tablename}' AS t, count(*)::int AS n, md5(coalesce(string_agg(${row}, ',' ORDER BY ${row}), '')) AS h FROM "${tablename}" x`,
    )
    .join(" UNION ALL ");
  const rows = await db.$queryRawUnsafe<{ t: string; n: number; h: string }[]>(sql);
  return Object.fromEntries(rows.map((r) => [r.t, `${r.n} rows, ${r.h}`]));
}

/**
 * The rows every procedure of the router can be called on, in ACME's shop project (after
 * seedTenants): a Change with one completed Task and its ChangeSet, a verified Candidate, two open
 * dead letters, a member without a role-specific email, a member's API token, two webhooks
 * (`whk_<tag>` with one delivery `whd_<tag>`, and `whk_<tag>_gone` to remove) and the viewer's
 * notification `ntf_<tag>`. `tag` keeps one test file's IDs apart from another's. Returns the
 * member token's ID (tokens.revoke's sample).
 */
export async function seedProcedureRows(
  db: Db,
  o: {
    tag: string;
    projectId: string;
    changeId: string;
    changeSetId: string;
    candidateId: string;
    tree: string;
    extraMember: string;
  },
): Promise<{ memberTokenId: string }> {
  const { tag, projectId } = o;
  await db.change.create({
    data: { id: o.changeId, projectId, title: "Wishlist", riskTier: "medium", clientRequestId: `${tag}-seed` },
  });
  await db.task.create({ data: { id: `task_${tag}`, changeId: o.changeId, key: "a", title: "a", state: "completed" } });
  await db.agentRun.create({
    data: {
      id: `run_${tag}`,
      taskId: `task_${tag}`,
      changeId: o.changeId,
      agentId: "agt",
      status: "completed",
      wakeCommandId: `wake_${tag}`,
      reason: "ready",
    },
  });
  await db.changeSet.create({
    data: {
      id: o.changeSetId,
      changeId: o.changeId,
      taskId: `task_${tag}`,
      runId: `run_${tag}`,
      agentId: "agt",
      fork: `ws-${tag}`,
      baseCommit: "c0",
      commit: "c1",
      patchRef: `source/${projectId}/patches/changesets/${o.changeSetId}.patch`,
    },
  });
  await db.candidate.create({
    data: {
      id: o.candidateId,
      projectId,
      changeId: o.changeId,
      compositionKey: tag,
      baseGeneration: 0,
      baseCommit: "c0",
      changeSetIds: [o.changeSetId],
      status: "verified",
      composedTree: o.tree,
    },
  });
  for (const commandId of [`cmd_${tag}1`, `cmd_${tag}2`]) {
    await db.deadLetter.create({
      data: {
        id: `dl_${commandId}`,
        kind: "command",
        commandId,
        consumer: "rhumbatron-event-router",
        originQueue: "integration",
        projectId,
        reason: "boom",
        attempts: 1,
        payload: {
          commandId,
          commandType: "project.provision",
          projectId,
          changeId: null,
          taskId: null,
          attempt: 0,
          createdAt: "2026-01-01T00:00:00.000Z",
          deadline: null,
          payload: {},
        },
      },
    });
  }
  const at = new Date("2026-01-01T00:00:00Z");
  await db.testStatus.create({
    data: {
      projectId,
      checkId: "unit",
      testId: "cart > adds",
      name: "cart > adds",
      status: "flaky",
      statusSince: at,
      lastRunAt: at,
      runs: 3,
      flakyRuns: 1,
    },
  });
  await db.user.create({ data: { id: o.extraMember, email: "extra@acme.test", name: "Extra" } });
  await db.membership.create({ data: { tenantId: ACME.tenantId, userId: o.extraMember, role: "member" } });
  const memberToken = await createApiToken(
    db,
    { tenantId: ACME.tenantId, userId: "usr_acme_member", name: "member's", role: "member" },
    new Date(),
  );
  for (const id of [`whk_${tag}`, `whk_${tag}_gone`]) {
    await db.webhook.create({
      data: {
        id,
        projectId,
        url: `https://hooks.example.com/${id}`,
        eventTypes: ["approval.requested"],
        secret: `whsec_${id}`,
        secretPrefix: "whsec_",
        createdBy: "usr_acme_admin",
      },
    });
  }
  await db.webhookDelivery.create({
    data: {
      id: `whd_${tag}`,
      webhookId: `whk_${tag}`,
      eventId: `evt_${tag}`,
      eventType: "approval.requested",
      event: { eventId: `evt_${tag}`, eventType: "approval.requested" },
      status: "succeeded",
    },
  });
  await db.notification.create({
    data: {
      id: `ntf_${tag}`,
      tenantId: ACME.tenantId,
      userId: "usr_acme_viewer",
      eventId: `evt_${tag}`,
      kind: "approval_requested",
      projectId,
      changeId: o.changeId,
      candidateId: o.candidateId,
      title: "Approval waiting: “Wishlist”",
      occurredAt: new Date("2026-01-01T00:00:00Z"),
    },
  });
  return { memberTokenId: memberToken.token.id };
}
