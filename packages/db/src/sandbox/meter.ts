import { randomUUID } from "node:crypto";
import {
  DomainError,
  decideAdmission,
  decideReservation,
  meterWindow,
  type RhumbatronConfig,
  resolveSandboxBudget,
  type SandboxBilling,
  type SandboxKind,
  settleSeconds,
} from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { type Tx, withTransaction } from "../transaction.ts";
import { meterOwner, sandboxMeterScope } from "./tenant-meter.ts";

export { sandboxBudgetOf, sandboxMeterScope } from "./tenant-meter.ts";

/**
 * The Sandbox guards in usage_counters: admitSandbox, reserve and settle (docs/workflows.md).
 * The monthly meter is per tenant (a project belongs to one tenant): its counters' scope is
 * `<env>:<tenant>` (sandboxMeterScope) and its budget the tenant's (docs/sandbox.md, the meter).
 * Every change to a tenant's meter first locks its `sandbox_reserved_seconds` row, so reservations
 * and settlements run one at a time per tenant and a reservation always decides on committed values
 * of both counters: two concurrent reservations can never pass the budget. Each reservation also
 * has a sandbox_charges row naming its tenant, project and Change, which settling completes with
 * what it was charged. A refusal is DomainError PRECONDITION_FAILED; the caller blocks the Task
 * with blocked_limit `sandbox_meter`.
 */
export const SANDBOX_COUNTERS = {
  openWorkspaces: "sandbox_open_workspaces",
  reservedSeconds: "sandbox_reserved_seconds",
  usedSeconds: "sandbox_used_seconds",
  /** One row per open reservation (scope = reservation id), so settling twice is a no-op. */
  reservation: "sandbox_reservation",
} as const;

/** Open workspaces are counted per Change across months. */
const NO_WINDOW = "-";

type MeterConfig = Pick<RhumbatronConfig, "env" | "sandbox">;

export interface SandboxAdmission {
  changeId: string;
  projectId: string;
}

export interface SandboxReservation {
  id: string;
  kind: SandboxKind;
  seconds: number;
  /** The month the reservation and its settlement count in. */
  window: string;
  /** The environment whose meter is charged. */
  env: string;
  /** Set when the reservation belongs to an admitted workspace: settling it closes that workspace. */
  changeId: string | null;
}

function refused(
  limit: "sandbox_open_workspaces" | "sandbox_monthly_seconds",
  message: string,
  details: Record<string, unknown> = {},
): DomainError {
  return new DomainError("PRECONDITION_FAILED", message, { limit, blockedLimit: "sandbox_meter", ...details });
}

async function ensureCounter(tx: Tx, counter: string, scopeId: string, window: string): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO usage_counters (counter, scope_id, "window", count) VALUES (${counter}, ${scopeId}, ${window}, 0)
    ON CONFLICT (counter, scope_id, "window") DO NOTHING`;
}

/** Locks the row until the transaction ends and returns its count (taken after the lock is held). */
async function lockCounter(tx: Tx, counter: string, scopeId: string, window: string): Promise<number> {
  const rows = await tx.$queryRaw<{ count: number }[]>`
    SELECT count FROM usage_counters WHERE counter = ${counter} AND scope_id = ${scopeId} AND "window" = ${window}
    FOR UPDATE`;
  return rows[0]?.count ?? 0;
}

async function addTo(tx: Tx, counter: string, scopeId: string, window: string, delta: number): Promise<void> {
  await tx.$executeRaw`
    UPDATE usage_counters SET count = GREATEST(count + ${delta}, 0)
    WHERE counter = ${counter} AND scope_id = ${scopeId} AND "window" = ${window}`;
}

/** Opens a workspace for a Change, refused at `openWorkspacesPerChange` (4) open ones. */
export async function admitSandbox(
  db: Db,
  input: { changeId: string; projectId: string },
  config: MeterConfig,
): Promise<SandboxAdmission> {
  return withTransaction(db, async ({ tx }) => {
    await ensureCounter(tx, SANDBOX_COUNTERS.openWorkspaces, input.changeId, NO_WINDOW);
    const open = await lockCounter(tx, SANDBOX_COUNTERS.openWorkspaces, input.changeId, NO_WINDOW);
    if (decideAdmission(open, config) !== "admit") {
      throw refused(
        "sandbox_open_workspaces",
        `sandbox open-workspace limit: Change ${input.changeId} already has ${open} of ${config.sandbox.openWorkspacesPerChange} workspaces open`,
      );
    }
    await addTo(tx, SANDBOX_COUNTERS.openWorkspaces, input.changeId, NO_WINDOW, 1);
    return { changeId: input.changeId, projectId: input.projectId };
  });
}

/** Closes an admitted workspace that never got a reservation (settleSandbox closes the others). */
export async function releaseSandboxAdmission(db: Db, admission: SandboxAdmission): Promise<void> {
  await db.$executeRaw`
    UPDATE usage_counters SET count = GREATEST(count - 1, 0)
    WHERE counter = ${SANDBOX_COUNTERS.openWorkspaces} AND scope_id = ${admission.changeId} AND "window" = ${NO_WINDOW}`;
}

/**
 * Reserves 300 s (agent) or 900 s (candidate) on the tenant's monthly meter, against the tenant's
 * budget. The tenant comes from `tenantId`, the Change or the owner's ID (see meterOwner).
 */
export async function reserveSandboxSeconds(
  db: Db,
  input: { kind: SandboxKind; env?: string; changeId?: string | null; id?: string; tenantId?: string },
  config: MeterConfig,
  now: Date,
): Promise<SandboxReservation> {
  const env = input.env ?? config.env;
  const window = meterWindow(now);
  const { reservedSeconds: R, usedSeconds: U } = SANDBOX_COUNTERS;
  return withTransaction(db, async ({ tx }) => {
    if (input.id) {
      // A stable reservation ID (a workflow step re-run after a crash): the open reservation is reused.
      const held = await tx.$queryRaw<{ count: number; window: string }[]>`
        SELECT count, "window" FROM usage_counters WHERE counter = ${SANDBOX_COUNTERS.reservation} AND scope_id = ${input.id}`;
      const h = held[0];
      if (h)
        return {
          id: input.id,
          kind: input.kind,
          seconds: h.count,
          window: h.window,
          env,
          changeId: input.changeId ?? null,
        };
    }
    const owner = await meterOwner(tx, input);
    const scope = sandboxMeterScope(env, owner.tenantId);
    // Few round trips while the tenant's meter is locked: every reservation of the tenant waits here.
    await tx.$executeRaw`
      INSERT INTO usage_counters (counter, scope_id, "window", count)
      VALUES (${R}, ${scope}, ${window}, 0), (${U}, ${scope}, ${window}, 0)
      ON CONFLICT (counter, scope_id, "window") DO NOTHING`;
    // Locks reserved, then used (the order settle takes them in), and reads the tenant's own budget.
    const rows = await tx.$queryRaw<{ counter: string; count: number; budget: number | null }[]>`
      SELECT u.counter, u.count,
        (SELECT b.monthly_seconds FROM tenant_sandbox_budgets b WHERE b.tenant_id = ${owner.tenantId}) AS budget
      FROM usage_counters u
      WHERE u.counter IN (${R}, ${U}) AND u.scope_id = ${scope} AND u."window" = ${window}
      ORDER BY u.counter
      FOR UPDATE OF u`;
    const reserved = rows.find((r) => r.counter === R)?.count ?? 0;
    const used = rows.find((r) => r.counter === U)?.count ?? 0;
    const budget = resolveSandboxBudget(rows[0]?.budget ?? null, config);
    const decision = decideReservation(
      { usedSeconds: used, reservedSeconds: reserved, request: input.kind, budget },
      config,
    );
    if (!decision.ok) {
      throw refused("sandbox_monthly_seconds", `tenant ${owner.tenantId}: ${decision.reason}`, {
        tenantId: owner.tenantId,
        budgetSeconds: budget.seconds,
        budgetSource: budget.source,
      });
    }
    // The same rule again in SQL: a guard should anything ever write the meter without the lock.
    const moved = await tx.$executeRaw`
      UPDATE usage_counters r SET count = r.count + ${decision.reserve}
      WHERE r.counter = ${R} AND r.scope_id = ${scope} AND r."window" = ${window}
        AND r.count + ${decision.reserve} + (SELECT u.count FROM usage_counters u
          WHERE u.counter = ${U} AND u.scope_id = ${scope} AND u."window" = ${window}) <= ${budget.seconds}`;
    if (moved !== 1) throw refused("sandbox_monthly_seconds", "sandbox monthly meter: the budget would pass");
    const id = input.id ?? `sbxres_${randomUUID()}`;
    // The reservation row (settling deletes it, once) and its charge row (tenant, project, Change).
    await tx.$executeRaw`
      WITH held AS (
        INSERT INTO usage_counters (counter, scope_id, "window", count)
        VALUES (${SANDBOX_COUNTERS.reservation}, ${id}, ${window}, ${decision.reserve})
      )
      INSERT INTO sandbox_charges
        (reservation_id, tenant_id, env, "window", kind, project_id, change_id, reserved_seconds, reserved_at)
      VALUES (${id}, ${owner.tenantId}, ${env}, ${window}, ${input.kind}, ${owner.projectId}, ${owner.changeId},
        ${decision.reserve}, ${now})
      ON CONFLICT (reservation_id) DO NOTHING`;
    return { id, kind: input.kind, seconds: decision.reserve, window, env, changeId: input.changeId ?? null };
  });
}

export interface SettleResult {
  /** False when this reservation was already settled (nothing changed). */
  settled: boolean;
  usedSeconds: number;
}

/**
 * Releases the reservation, charges what the workspace cost (settleSeconds: its wall seconds, plus
 * the idle tail only for a provider with `container` billing) to the tenant's month it was
 * reserved in, records the charge, and closes the workspace it belonged to. `billing` is the
 * Sandbox's own (`sandbox.billing`); unset, `measured`, what every local provider declares.
 * Idempotent: the reservation row is deleted on the first call.
 */
export async function settleSandbox(
  db: Db,
  reservation: SandboxReservation,
  input: { wallSeconds: number; billing?: SandboxBilling },
  config: MeterConfig,
): Promise<SettleResult> {
  const billing = input.billing ?? "measured";
  const charge = settleSeconds({ wallSeconds: input.wallSeconds, kind: reservation.kind, billing }, config);
  const { reservedSeconds: R, usedSeconds: U } = SANDBOX_COUNTERS;
  const { window } = reservation;
  return withTransaction(db, async ({ tx }) => {
    const ledger = await tx.$queryRaw<{ tenant_id: string; env: string }[]>`
      SELECT tenant_id, env FROM sandbox_charges WHERE reservation_id = ${reservation.id}`;
    const owner = ledger[0];
    // A reservation made before the meter was per tenant has no charge row: it was counted on the
    // environment's meter (scope = env), so it is released there.
    const scope = owner ? sandboxMeterScope(owner.env, owner.tenant_id) : reservation.env;
    await lockCounter(tx, R, scope, window);
    const gone = await tx.$queryRaw<{ count: number }[]>`
      DELETE FROM usage_counters WHERE counter = ${SANDBOX_COUNTERS.reservation} AND scope_id = ${reservation.id}
      RETURNING count`;
    const held = gone[0]?.count;
    if (held === undefined) return { settled: false, usedSeconds: 0 };
    // Release the reservation, record the charge and add it to used, in one statement.
    await tx.$executeRaw`
      WITH released AS (
        UPDATE usage_counters SET count = GREATEST(count - ${held}, 0)
        WHERE counter = ${R} AND scope_id = ${scope} AND "window" = ${window}
      ), recorded AS (
        UPDATE sandbox_charges SET billing = ${billing}, wall_seconds = ${Math.ceil(input.wallSeconds)},
          charged_seconds = ${charge}, settled_at = ${new Date()}
        WHERE reservation_id = ${reservation.id}
      )
      INSERT INTO usage_counters (counter, scope_id, "window", count) VALUES (${U}, ${scope}, ${window}, ${charge})
      ON CONFLICT (counter, scope_id, "window") DO UPDATE SET count = usage_counters.count + EXCLUDED.count`;
    if (reservation.changeId) await addTo(tx, SANDBOX_COUNTERS.openWorkspaces, reservation.changeId, NO_WINDOW, -1);
    return { settled: true, usedSeconds: charge };
  });
}

/** An open reservation by its ID (a re-claimed run finds the one its first attempt made), or null. */
export async function openReservation(
  db: Db,
  id: string,
  input: { kind: SandboxKind; changeId?: string | null },
  config: MeterConfig,
): Promise<SandboxReservation | null> {
  const rows = await db.$queryRaw<{ count: number; window: string }[]>`
    SELECT count, "window" FROM usage_counters WHERE counter = ${SANDBOX_COUNTERS.reservation} AND scope_id = ${id}`;
  const r = rows[0];
  return r
    ? { id, kind: input.kind, seconds: r.count, window: r.window, env: config.env, changeId: input.changeId ?? null }
    : null;
}

/**
 * Settles reservations whose owner is gone: an Agent run (`sbxres_run_…`) that is no longer
 * running, or a verification (`sbxres_cand_…`) whose workflow instance has finished, after a crash
 * left them open. What the crashed run used is unknown, so it is charged its whole reservation as
 * wall time, billed as a settle would (`billing`, default `measured`: no idle tail); an Agent run's
 * workspace is closed. Returns how many it settled.
 */
export async function sweepSandboxReservations(
  db: Db,
  config: MeterConfig,
  billing: SandboxBilling = "measured",
): Promise<number> {
  const orphans = await db.$queryRaw<
    { id: string; count: number; window: string; change_id: string | null; kind: string }[]
  >`
    SELECT u.scope_id AS id, u.count, u."window", r.change_id, 'agent' AS kind
    FROM usage_counters u JOIN agent_runs r ON u.scope_id = 'sbxres_' || r.id
    WHERE u.counter = ${SANDBOX_COUNTERS.reservation} AND r.status NOT IN ('queued', 'running')
    UNION ALL
    SELECT u.scope_id AS id, u.count, u."window", NULL AS change_id, 'candidate' AS kind
    FROM usage_counters u JOIN workflow_instances w ON u.scope_id = 'sbxres_' || w.instance_id
    WHERE u.counter = ${SANDBOX_COUNTERS.reservation} AND w.status <> 'running'`;
  let settled = 0;
  for (const o of orphans) {
    const kind = o.kind as SandboxKind;
    const r = await settleSandbox(
      db,
      { id: o.id, kind, seconds: o.count, window: o.window, env: config.env, changeId: o.change_id },
      { wallSeconds: o.count, billing },
      config,
    );
    if (r.settled) settled++;
  }
  return settled;
}
