import {
  DomainError,
  flakyRateText,
  quarantineHolds,
  type RhumbatronConfig,
  TEST_HEALTHS,
  type TestHealth,
} from "@rhumbatron/core";
import { appendToOutbox, type OutboxDeps } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { projectEvent } from "../events/factory.ts";
import { lockProjectRow } from "../events/owners.ts";
import { withTransaction } from "../transaction.ts";
import { quarantineOf } from "./history.ts";

/**
 * A project's tests as their history reads (docs/flaky-tests.md), and an admin's quarantine: a
 * quarantined test keeps running and being recorded, but its failure no longer blocks a gate, which
 * names it. Every quarantine has an owner, a reason and an expiry.
 */

export const TEST_LIST_FILTERS = ["troubled", "flaky", "broken", "quarantined", "all"] as const;
export type TestListFilter = (typeof TEST_LIST_FILTERS)[number];

export interface TestRow {
  checkId: string;
  testId: string;
  name: string;
  file: string | null;
  status: TestHealth;
  since: Date;
  runs: number;
  flakyRuns: number;
  failedRuns: number;
  /** "flaky on 2 of 9 runs" */
  rate: string;
  /** The newest Candidates it held up, and how many in all. */
  delayed: string[];
  delayedCount: number;
  lastRunAt: Date;
  /** `owner`: a user's ID or "policy"; `ownerName`: the user's email, when the user still exists. */
  quarantine: {
    owner: string;
    ownerName: string | null;
    reason: string;
    since: Date;
    expiresAt: Date;
    auto: boolean;
  } | null;
}

/** The project's tests: by default the flaky and broken ones and those in quarantine, worst first. */
export async function listTests(
  db: Db,
  q: { tenantId: string; projectId: string; filter?: TestListFilter; limit?: number },
  now: Date,
): Promise<TestRow[]> {
  const project = await db.project.findFirst({
    where: { id: q.projectId, tenantId: q.tenantId },
    select: { id: true },
  });
  if (!project) throw new DomainError("NOT_FOUND", `project ${q.projectId} not found`);
  const filter = q.filter ?? "troubled";
  const quarantined = { quarantinedAt: { not: null }, quarantineExpiresAt: { gt: now } };
  const where =
    filter === "all"
      ? {}
      : filter === "quarantined"
        ? quarantined
        : filter === "troubled"
          ? { OR: [{ status: { in: ["flaky", "broken"] } }, quarantined] }
          : { status: filter };
  const rows = await db.testStatus.findMany({
    where: { projectId: q.projectId, ...where },
    orderBy: [{ status: "asc" }, { flakyRuns: "desc" }, { failedRuns: "desc" }, { testId: "asc" }],
    take: q.limit ?? 200,
  });
  return named(
    db,
    rows.map((r) => testRow(r, now)),
  );
}

/** Each quarantine's owner by email, as people read it. */
async function named(db: Db, rows: TestRow[]): Promise<TestRow[]> {
  const ids = [...new Set(rows.flatMap((r) => (r.quarantine && !r.quarantine.auto ? [r.quarantine.owner] : [])))];
  const users = ids.length
    ? await db.user.findMany({ where: { id: { in: ids } }, select: { id: true, email: true } })
    : [];
  const email = new Map(users.map((u) => [u.id, u.email]));
  return rows.map((r) =>
    r.quarantine ? { ...r, quarantine: { ...r.quarantine, ownerName: email.get(r.quarantine.owner) ?? null } } : r,
  );
}

function testRow(r: Parameters<typeof quarantineOf>[0], now: Date): TestRow {
  const held = quarantineOf(r);
  return {
    checkId: r.checkId,
    testId: r.testId,
    name: r.name,
    file: r.file,
    status: TEST_HEALTHS.includes(r.status as TestHealth) ? (r.status as TestHealth) : "ok",
    since: r.statusSince,
    runs: r.runs,
    flakyRuns: r.flakyRuns,
    failedRuns: r.failedRuns,
    rate: flakyRateText(r),
    delayed: r.delayed,
    delayedCount: r.delayedCount,
    lastRunAt: r.lastRunAt,
    quarantine:
      held && quarantineHolds(held, now)
        ? {
            ...{ owner: held.owner, ownerName: null, reason: held.reason },
            ...{ since: held.at, expiresAt: held.expiresAt, auto: held.auto },
          }
        : null,
  };
}

export interface SetQuarantine {
  tenantId: string;
  projectId: string;
  checkId: string;
  testId: string;
  actorId: string;
  /** Null: take it out of quarantine. */
  quarantine: { reason: string; expiresAt?: Date | null } | null;
}

/**
 * An admin puts a test in quarantine (reason, and an expiry: by default tests.quarantineDays from
 * now) or takes it out; one `test.quarantine_changed` Event in the same transaction. Only a test the
 * project's checks have reported can be quarantined; the same state again writes nothing.
 */
export async function setTestQuarantine(
  db: Db,
  q: SetQuarantine,
  deps: OutboxDeps & { now: () => Date; config: RhumbatronConfig },
): Promise<{ changed: boolean; row: TestRow }> {
  const now = deps.now();
  const expiresAt = q.quarantine
    ? (q.quarantine.expiresAt ?? new Date(now.getTime() + deps.config.tests.quarantineDays * 86_400_000))
    : null;
  if (expiresAt && expiresAt.getTime() <= now.getTime()) {
    throw new DomainError("INVALID_INPUT", "the quarantine's expiry is in the past: give a later time");
  }
  const changed = await withTransaction(db, async (ctx) => {
    const root = await lockProjectRow(ctx, q.projectId).catch((err: unknown) => {
      if (err instanceof DomainError && err.code === "NOT_FOUND") return null;
      throw err;
    });
    if (!root || root.tenantId !== q.tenantId) throw new DomainError("NOT_FOUND", `project ${q.projectId} not found`);
    const key = { projectId_checkId_testId: { projectId: q.projectId, checkId: q.checkId, testId: q.testId } };
    const row = await ctx.tx.testStatus.findUnique({ where: key });
    if (!row) {
      throw new DomainError(
        "NOT_FOUND",
        `check ${q.checkId} of this project has reported no test ${JSON.stringify(q.testId)}; \`rhumbatron tests --all\` lists the ones it has`,
      );
    }
    const held = quarantineOf(row);
    const holds = held !== null && quarantineHolds(held, now);
    if (!q.quarantine && !holds) return false;
    if (
      q.quarantine &&
      holds &&
      held.reason === q.quarantine.reason &&
      held.expiresAt.getTime() === expiresAt?.getTime()
    )
      return false;
    await ctx.tx.testStatus.update({
      where: key,
      data: q.quarantine
        ? {
            quarantinedAt: now,
            quarantineOwner: q.actorId,
            quarantineReason: q.quarantine.reason,
            quarantineExpiresAt: expiresAt,
            quarantineAuto: false,
          }
        : {
            quarantinedAt: null,
            quarantineOwner: null,
            quarantineReason: null,
            quarantineExpiresAt: null,
            quarantineAuto: false,
          },
    });
    const event = projectEvent(root, "test.quarantine_changed", {
      actor: { kind: "user", id: q.actorId },
      payload: {
        checkId: q.checkId,
        testId: q.testId,
        name: row.name,
        quarantined: q.quarantine !== null,
        reason: q.quarantine?.reason ?? `taken out of quarantine (was: ${held?.reason ?? ""})`,
        expiresAt: expiresAt?.toISOString() ?? null,
        actorId: q.actorId,
      },
      now,
    });
    await appendToOutbox(ctx, [event], deps);
    return true;
  });
  const row = await db.testStatus.findUniqueOrThrow({
    where: { projectId_checkId_testId: { projectId: q.projectId, checkId: q.checkId, testId: q.testId } },
  });
  const [shown] = await named(db, [testRow(row, now)]);
  return { changed, row: shown as TestRow };
}
