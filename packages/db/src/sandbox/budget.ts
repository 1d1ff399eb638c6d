import {
  DomainError,
  meterWindow,
  type RhumbatronConfig,
  type SandboxBudgetSource,
  type SandboxKind,
  sandboxBudgetSecondsSchema,
} from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { withTransaction } from "../transaction.ts";
import type { WorkGraphDeps } from "../work-graph/shared.ts";
import { SANDBOX_COUNTERS } from "./meter.ts";
import { resumeBudgetBlockedTasksIn } from "./resume.ts";
import { sandboxBudgetOf, sandboxMeterScope } from "./tenant-meter.ts";

/**
 * A tenant's Sandbox meter as people read it (docs/sandbox.md, the meter): this month's used and
 * reserved seconds, the budget and where it comes from, and what used the seconds, from the
 * sandbox_charges rows settling writes. `setSandboxBudget` is the admin's way to raise (or lower) it.
 */
type MeterConfig = Pick<RhumbatronConfig, "env" | "sandbox">;

export interface SandboxMeterReading {
  tenantId: string;
  env: string;
  /** The UTC month, YYYY-MM. */
  window: string;
  usedSeconds: number;
  reservedSeconds: number;
  /** Budget minus used minus reserved, never below 0. */
  remainingSeconds: number;
  budget: {
    seconds: number;
    source: SandboxBudgetSource;
    /** When and by whom the tenant's own budget was set (null unless source is `tenant`). */
    updatedAt: Date | null;
    updatedBy: { userId: string; name: string | null; email: string | null } | null;
  };
  /** RHUMBATRON_SANDBOX_MONTHLY_SECONDS, or null when unset. */
  deploymentSeconds: number | null;
  /** The config default (`config.sandbox.monthlySeconds`). */
  defaultSeconds: number;
  /** What one workspace reserves before it starts: a reservation needs this much left. */
  reservationSeconds: { agent: number; candidate: number };
  /** Settled seconds this month by kind: agent runs and Candidate checks. */
  byKind: { kind: SandboxKind; seconds: number; runs: number }[];
  /** The Changes that used the most seconds this month, most first. */
  topChanges: {
    changeId: string | null;
    title: string | null;
    projectId: string | null;
    projectName: string | null;
    seconds: number;
    runs: number;
  }[];
  /** Reservations not settled yet (workspaces running now, or left by a crash until the sweep). */
  openReservations: number;
}

export async function sandboxMeter(
  db: Db,
  tenantId: string,
  config: MeterConfig,
  now: Date,
  options: { topChanges?: number } = {},
): Promise<SandboxMeterReading> {
  const window = meterWindow(now);
  const scope = sandboxMeterScope(config.env, tenantId);
  const [counters, budget, own, byKind, top, open] = await Promise.all([
    db.usageCounter.findMany({
      where: {
        scopeId: scope,
        window,
        counter: { in: [SANDBOX_COUNTERS.usedSeconds, SANDBOX_COUNTERS.reservedSeconds] },
      },
    }),
    sandboxBudgetOf(db, tenantId, config),
    db.$queryRaw<{ updated_at: Date; updated_by: string; name: string | null; email: string | null }[]>`
      SELECT b.updated_at, b.updated_by, u.name, u.email
      FROM tenant_sandbox_budgets b LEFT JOIN users u ON u.id = b.updated_by WHERE b.tenant_id = ${tenantId}`,
    db.$queryRaw<{ kind: SandboxKind; seconds: number; runs: number }[]>`
      SELECT kind, SUM(charged_seconds)::int AS seconds, COUNT(*)::int AS runs
      FROM sandbox_charges
      WHERE tenant_id = ${tenantId} AND env = ${config.env} AND "window" = ${window} AND settled_at IS NOT NULL
      GROUP BY kind ORDER BY kind`,
    topChangesQuery(db, tenantId, config.env, window, options.topChanges ?? 5),
    db.$queryRaw<{ n: number }[]>`
      SELECT COUNT(*)::int AS n FROM sandbox_charges
      WHERE tenant_id = ${tenantId} AND env = ${config.env} AND "window" = ${window} AND settled_at IS NULL`,
  ]);
  const count = (counter: string) => counters.find((r) => r.counter === counter)?.count ?? 0;
  const usedSeconds = count(SANDBOX_COUNTERS.usedSeconds);
  const reservedSeconds = count(SANDBOX_COUNTERS.reservedSeconds);
  const setBy = budget.source === "tenant" ? own[0] : undefined;
  return {
    tenantId,
    env: config.env,
    window,
    usedSeconds,
    reservedSeconds,
    remainingSeconds: Math.max(budget.seconds - usedSeconds - reservedSeconds, 0),
    budget: {
      ...budget,
      updatedAt: setBy?.updated_at ?? null,
      updatedBy: setBy ? { userId: setBy.updated_by, name: setBy.name, email: setBy.email } : null,
    },
    deploymentSeconds: config.sandbox.deploymentMonthlySeconds,
    defaultSeconds: config.sandbox.monthlySeconds,
    reservationSeconds: {
      agent: config.sandbox.agentReservationSeconds,
      candidate: config.sandbox.candidateReservationSeconds,
    },
    byKind,
    topChanges: top.map((r) => ({
      changeId: r.change_id,
      title: r.title,
      projectId: r.project_id,
      projectName: r.project_name,
      seconds: r.seconds,
      runs: r.runs,
    })),
    openReservations: open[0]?.n ?? 0,
  };
}

interface TopChangeRow {
  change_id: string | null;
  title: string | null;
  project_id: string | null;
  project_name: string | null;
  seconds: number;
  runs: number;
}

/** The Changes that used the most settled seconds of the tenant in this window, most first. */
function topChangesQuery(db: Db, tenantId: string, env: string, window: string, limit: number) {
  return db.$queryRaw<TopChangeRow[]>`
      SELECT s.change_id, c.title, s.project_id, p.name AS project_name, s.seconds, s.runs
      FROM (
        SELECT change_id, project_id, SUM(charged_seconds)::int AS seconds, COUNT(*)::int AS runs
        FROM sandbox_charges
        WHERE tenant_id = ${tenantId} AND env = ${env} AND "window" = ${window} AND settled_at IS NOT NULL
        GROUP BY change_id, project_id
      ) s
      LEFT JOIN changes c ON c.id = s.change_id
      LEFT JOIN projects p ON p.id = s.project_id
      ORDER BY s.seconds DESC, s.runs DESC, s.change_id
      LIMIT ${limit}`;
}

export interface SetSandboxBudgetResult {
  /** False when the tenant's budget already had this value (nothing was written). */
  changed: boolean;
  /** The tenant's own budget before, or null when it had none (the setting or the default applied). */
  previousSeconds: number | null;
  /** True when the new budget is below what this month already used and reserved. */
  belowUsage: boolean;
  /** How many Tasks the budget had blocked were resumed by this change (sandbox/resume.ts). */
  resumedTasks: number;
  /** What the new budget means now, in one sentence (and which blocked Tasks it resumed). */
  note: string;
  meter: SandboxMeterReading;
}

const tasks = (n: number) => (n === 1 ? "1 Task" : `${n} Tasks`);

/**
 * Sets the tenant's own monthly Sandbox budget (admins; the router checks the role). It applies to
 * the next reservation, this month included. A value below what is already used is allowed (the
 * answer says so: every reservation is then refused until the month ends or the budget is raised).
 * In the same transaction, the Tasks the budget had blocked resume as far as the new budget has room.
 */
export async function setSandboxBudget(
  db: Db,
  input: { tenantId: string; monthlySeconds: number; userId: string },
  deps: WorkGraphDeps,
): Promise<SetSandboxBudgetResult> {
  const { config } = deps;
  const now = deps.now();
  const parsed = sandboxBudgetSecondsSchema.safeParse(input.monthlySeconds);
  if (!parsed.success) {
    throw new DomainError("INVALID_INPUT", `monthlySeconds ${parsed.error.issues[0]?.message ?? "is invalid"}`);
  }
  const seconds = parsed.data;
  const { changed, previousSeconds, resumed } = await withTransaction(db, async (ctx) => {
    const { tx } = ctx;
    const before = await tx.tenantSandboxBudget.findUnique({ where: { tenantId: input.tenantId } });
    const changed = before?.monthlySeconds !== seconds;
    if (changed) {
      await tx.tenantSandboxBudget.upsert({
        where: { tenantId: input.tenantId },
        create: { tenantId: input.tenantId, monthlySeconds: seconds, updatedAt: now, updatedBy: input.userId },
        update: { monthlySeconds: seconds, updatedAt: now, updatedBy: input.userId },
      });
    }
    // Also when unchanged: saving the same budget again resumes what has room (after a month turned).
    const resumed = await resumeBudgetBlockedTasksIn(ctx, input.tenantId, deps);
    return { changed, previousSeconds: changed ? (before?.monthlySeconds ?? null) : seconds, resumed };
  });
  const meter = await sandboxMeter(db, input.tenantId, config, now);
  const inUse = meter.usedSeconds + meter.reservedSeconds;
  const belowUsage = seconds < inUse;
  const note = belowUsage
    ? `The budget of ${seconds} s is below what ${meter.window} already holds (${meter.usedSeconds} s used + ${meter.reservedSeconds} s reserved): every new Sandbox reservation is refused until the month ends or the budget is raised.`
    : `${meter.window}: ${meter.remainingSeconds} s of ${seconds} s left (${meter.usedSeconds} s used, ${meter.reservedSeconds} s reserved).`;
  const resumedTasks = resumed.resumed.length;
  const tasksNote =
    (resumedTasks ? ` ${tasks(resumedTasks)} the budget had blocked resumed.` : "") +
    (resumed.waiting
      ? ` ${tasks(resumed.waiting)} the budget blocked ${resumed.waiting === 1 ? "waits" : "wait"} for room: ${resumed.waiting === 1 ? "it resumes by itself" : "they resume by themselves"} once the budget is raised or the month turns.`
      : "");
  return { changed, previousSeconds, belowUsage, resumedTasks, note: note + tasksNote, meter };
}
