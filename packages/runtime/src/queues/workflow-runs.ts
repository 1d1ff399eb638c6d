import { heldByDeadWorker, takeoverCutoff } from "../leases/holders.ts";
import { claimWhileWorking, orphanedBy } from "../leases/working.ts";
import type { SqlDatabase as Db, SqlClient } from "../sql.ts";
import { type TxContext, withTransaction } from "../transaction.ts";

/**
 * Running a workflow instance durably on either executor, every step idempotent. A runner
 * leases one `running` instance; each completed step is stored with its output in workflow_steps, so
 * a re-run after a crash replays finished steps instead of repeating them. A crashed runner's
 * instance is picked up by another runner as soon as the crashed one's heartbeat stops
 * (leases/holders.ts), or when its lease runs out; an instance whose run failed without letting go
 * is taken again by its own holder (leases/working.ts: the caller calls
 * doneWorking(owner, "workflow", [instanceId], now) when it is done with the instance).
 */
export interface ClaimedWorkflow {
  instanceId: string;
  input: Record<string, unknown>;
  attempts: number;
}

export interface WorkflowLease {
  now: Date;
  leaseSeconds: number;
  /** The claiming worker (worker_heartbeats.worker_id). */
  owner: string;
  /** An instance whose holder has not beaten for this long is taken over (worker.takeoverSeconds). */
  takeoverSeconds: number;
}

export async function claimWorkflowInstance(
  db: Db,
  workflow: string,
  lease: WorkflowLease,
): Promise<ClaimedWorkflow | null> {
  const { now } = lease;
  const until = new Date(now.getTime() + lease.leaseSeconds * 1000);
  const deadHolder = heldByDeadWorker("lease_owner", takeoverCutoff(now, lease.takeoverSeconds), lease.owner);
  return claimWhileWorking(
    lease.owner,
    "workflow",
    { now, holdMs: lease.takeoverSeconds * 1000 },
    async (busy) => {
      const orphan = orphanedBy("lease_owner", "instance_id", lease.owner, busy);
      const rows = await db.$queryRaw<{ instance_id: string; input: Record<string, unknown>; attempts: number }[]>`
        UPDATE workflow_instances SET leased_until = ${until}, lease_owner = ${lease.owner}, attempts = attempts + 1
        WHERE instance_id = (
          SELECT instance_id FROM workflow_instances
          WHERE workflow = ${workflow} AND status = 'running'
            AND (leased_until IS NULL OR leased_until < ${now} OR ${deadHolder} OR ${orphan})
          ORDER BY started_at, instance_id
          FOR UPDATE SKIP LOCKED LIMIT 1)
        RETURNING instance_id, input, attempts`;
      const r = rows[0];
      return r ? { instanceId: r.instance_id, input: r.input, attempts: r.attempts } : null;
    },
    (r) => (r ? [r.instanceId] : []),
  );
}

export interface WorkflowRun {
  instanceId: string;
  /** A step with an outside effect that is itself idempotent (git, Sandbox, blobs); its output is stored. */
  step<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** A step whose effect is database rows: the rows and the step record commit together, exactly once. */
  txStep<T>(name: string, fn: (ctx: TxContext) => Promise<T>): Promise<T>;
  /** Whether a step already completed (and its output). */
  done<T>(name: string): Promise<{ output: T } | null>;
}

export function workflowRun(db: Db, instanceId: string, lease: { now: () => Date; leaseSeconds: number }): WorkflowRun {
  const stored = async <T>(name: string) => {
    const [row] = await db.$queryRaw<{ output: unknown }[]>`
      SELECT output FROM workflow_steps WHERE instance_id = ${instanceId} AND step = ${name}`;
    return row ? { output: row.output as T } : null;
  };
  const renew = () =>
    db.$executeRaw`
      UPDATE workflow_instances SET leased_until = ${new Date(lease.now().getTime() + lease.leaseSeconds * 1000)}
      WHERE instance_id = ${instanceId} AND status = 'running'`;
  const json = (v: unknown) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));
  return {
    instanceId,
    done: stored,
    async step(name, fn) {
      const prior = await stored<Awaited<ReturnType<typeof fn>>>(name);
      if (prior) return prior.output;
      await renew();
      const output = await fn();
      await db.$executeRaw`
        INSERT INTO workflow_steps (instance_id, step, output, completed_at)
        VALUES (${instanceId}, ${name}, ${JSON.stringify(json(output))}::jsonb, ${lease.now()})
        ON CONFLICT (instance_id, step) DO NOTHING`;
      return (await stored<Awaited<ReturnType<typeof fn>>>(name))?.output ?? output;
    },
    async txStep(name, fn) {
      const prior = await stored<Awaited<ReturnType<typeof fn>>>(name);
      if (prior) return prior.output;
      await renew();
      return withTransaction(db, async (ctx) => {
        // The step row first: a concurrent runner of the same step waits here, then finds it done.
        const inserted = await ctx.tx.$executeRaw`
          INSERT INTO workflow_steps (instance_id, step, output, completed_at)
          VALUES (${instanceId}, ${name}, NULL, ${lease.now()})
          ON CONFLICT (instance_id, step) DO NOTHING`;
        if (inserted === 0) {
          const [row] = await ctx.tx.$queryRaw<{ output: unknown }[]>`
            SELECT output FROM workflow_steps WHERE instance_id = ${instanceId} AND step = ${name}`;
          return row?.output as Awaited<ReturnType<typeof fn>>;
        }
        const output = await fn(ctx);
        await ctx.tx.$executeRaw`
          UPDATE workflow_steps SET output = ${JSON.stringify(json(output))}::jsonb
          WHERE instance_id = ${instanceId} AND step = ${name}`;
        return output;
      });
    },
  };
}

/** Ends the instance (succeeded or failed) and drops its lease; a second finish changes nothing. */
export async function finishWorkflowInstance(
  db: SqlClient,
  instanceId: string,
  outcome: { status: "succeeded" | "failed"; output?: unknown; error?: string | null },
  now: Date,
): Promise<boolean> {
  const count = await db.$executeRaw`
    UPDATE workflow_instances SET status = ${outcome.status}, output = ${JSON.stringify(outcome.output ?? {})}::jsonb,
      error = ${outcome.error ?? null}, finished_at = ${now}, leased_until = NULL, lease_owner = NULL
    WHERE instance_id = ${instanceId} AND status = 'running'`;
  return count > 0;
}

/** Lets another runner take the instance at once (a runner that hit a retryable failure). */
export async function releaseWorkflowLease(db: Db, instanceId: string, retryAt: Date): Promise<void> {
  await db.$executeRaw`
    UPDATE workflow_instances SET leased_until = ${retryAt}, lease_owner = NULL
    WHERE instance_id = ${instanceId} AND status = 'running'`;
}
