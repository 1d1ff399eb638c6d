import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { commandIds, DomainError } from "@rhumbatron/core";
import { type EnqueueDeps, enqueueCommand } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { createProjectIn } from "./create-project.ts";

/**
 * A project made empty to receive a `git push` (docs/repositories.md, Pushing into an empty
 * project). It waits
 * (status awaiting_push) with one push token: random, shown once, only its SHA-256 kept, valid for
 * `source.pushTokenTtlSeconds`. The worker's git endpoint checks it on every request of the push;
 * the push that arrives spends it, records the received repository's quarantine folder and sends
 * project.provision, all in one transaction, so of two pushes at once only one is taken.
 */
export interface IssuedPushToken {
  token: string;
  expiresAt: Date;
}

const hash = (token: string) => createHash("sha256").update(token).digest("hex");

/** Refused pushes say no more than this: a wrong token must not learn whether the project exists. */
const REFUSED =
  "the push token is not valid for this project (wrong, expired or already used); ask an admin for a new one";

async function writeToken(
  ctx: TxContext,
  projectId: string,
  actorId: string,
  deps: Pick<EnqueueDeps, "config" | "now">,
): Promise<IssuedPushToken> {
  const token = `rpt_${randomBytes(32).toString("base64url")}`;
  const expiresAt = new Date(deps.now().getTime() + deps.config.source.pushTokenTtlSeconds * 1000);
  const data = { tokenHash: hash(token), expiresAt, createdBy: actorId, spentAt: null, quarantine: null };
  await ctx.tx.pushToken.upsert({ where: { projectId }, create: { projectId, ...data }, update: data });
  return { token, expiresAt };
}

/** A new project waiting for a push, with its first token. */
export async function createProjectForPush(
  db: Db,
  p: { tenantId: string; name: string; actorId: string },
  deps: EnqueueDeps,
): Promise<{ projectId: string } & IssuedPushToken> {
  return withTransaction(db, async (ctx) => {
    const projectId = await createProjectIn(ctx, { tenantId: p.tenantId, name: p.name, source: "push" }, deps);
    return { projectId, ...(await writeToken(ctx, projectId, p.actorId, deps)) };
  });
}

/** A new token for a project still waiting for its push; the one before stops working. */
export async function reissuePushToken(
  db: Db,
  p: { tenantId: string; projectId: string; actorId: string },
  deps: Pick<EnqueueDeps, "config" | "now">,
): Promise<IssuedPushToken> {
  return withTransaction(db, async (ctx) => {
    // Locked, so a push being accepted at this moment and this reissue do not interleave.
    const rows = await ctx.tx.$queryRaw<{ status: string }[]>`
      SELECT status::text AS status FROM projects WHERE id = ${p.projectId} AND tenant_id = ${p.tenantId} FOR UPDATE`;
    const status = rows[0]?.status;
    if (!status) throw new DomainError("NOT_FOUND", `project ${p.projectId} not found`);
    if (status !== "awaiting_push")
      throw new DomainError(
        "PRECONDITION_FAILED",
        `the project is ${status}; only a project waiting for a push takes one`,
      );
    return writeToken(ctx, p.projectId, p.actorId, deps);
  });
}

/** Refuses (FORBIDDEN) unless `token` is the live, unspent token of a project waiting for its push. */
export async function checkPushToken(db: Db, projectId: string, token: string | null, now: Date): Promise<void> {
  if (!token) throw new DomainError("FORBIDDEN", REFUSED);
  const row = await db.pushToken.findUnique({
    where: { projectId },
    include: { project: { select: { status: true } } },
  });
  if (!row || !sameHash(row.tokenHash, hash(token))) throw new DomainError("FORBIDDEN", REFUSED);
  if (row.spentAt || row.expiresAt.getTime() <= now.getTime() || row.project.status !== "awaiting_push")
    throw new DomainError("FORBIDDEN", REFUSED);
}

function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/**
 * Takes a received push: spends the token, records the quarantine folder, moves the project to
 * provisioning and sends project.provision. FORBIDDEN when the token is no longer good (spent by
 * another push that won, expired, replaced) or the project stopped waiting; nothing is written then.
 */
export async function acceptPush(
  db: Db,
  p: { projectId: string; token: string; quarantine: string },
  deps: EnqueueDeps,
): Promise<void> {
  await withTransaction(db, async (ctx) => {
    const taken = await ctx.tx.project.updateMany({
      where: { id: p.projectId, status: "awaiting_push" },
      data: { status: "provisioning" },
    });
    const now = deps.now();
    const spent = await ctx.tx.pushToken.updateMany({
      where: { projectId: p.projectId, tokenHash: hash(p.token), spentAt: null, expiresAt: { gt: now } },
      data: { spentAt: now, quarantine: p.quarantine },
    });
    // Throwing rolls both updates back: the project keeps waiting for a push with a good token.
    if (taken.count !== 1 || spent.count !== 1) throw new DomainError("FORBIDDEN", REFUSED);
    await enqueueCommand(
      ctx,
      {
        commandId: commandIds.provision(p.projectId),
        commandType: "project.provision",
        projectId: p.projectId,
        payload: {},
      },
      deps,
    );
  });
}

/** Where the push that started this project's provisioning was received (null: none recorded). */
export async function pushQuarantineOf(db: Db, projectId: string): Promise<string | null> {
  const row = await db.pushToken.findUnique({ where: { projectId }, select: { quarantine: true } });
  return row?.quarantine ?? null;
}
