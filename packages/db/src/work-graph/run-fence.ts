import { DomainError } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { Tx } from "../transaction.ts";

/**
 * The fence on an Agent run's writes. Every claim of a run (claimNextRun, ./runs.ts) starts a new
 * epoch (agent_runs.runner_epoch), and the runner keeps the epoch it claimed in (RunContext.epoch).
 * A runner counted dead (a late heartbeat on a busy machine, packages/runtime/src/leases/holders.ts)
 * or whose run went stale may still be working when another worker takes the run over. From then on
 * every write of the first runner on the run, its Task or its ChangeSet is refused (CONFLICT, with
 * `details.runSuperseded`) inside the transaction that would have made it: the superseded execution
 * records nothing, and the taker's result is the run's only one.
 */
export interface HeldRun {
  runId: string;
  /** The epoch the runner claimed the run in; 0 for a run no runner claimed (a person's tool, a test). */
  epoch: number;
}

/** A run nobody claimed: the epoch a write without one is fenced with. */
export const UNCLAIMED_EPOCH = 0;

export function runSuperseded(run: HeldRun): DomainError {
  return new DomainError(
    "CONFLICT",
    `run ${run.runId} was taken over by another runner after this one claimed it (epoch ${run.epoch}): this runner records nothing more for it`,
    { runSuperseded: run.runId, epoch: run.epoch },
  );
}

export function isRunSuperseded(err: unknown): err is DomainError {
  return err instanceof DomainError && typeof err.details?.runSuperseded === "string";
}

/**
 * Inside the caller's transaction: locks the run's row until the transaction ends if the runner's
 * epoch is still the run's, else throws runSuperseded. A claim waits for the lock (or skips the
 * row), so no takeover slips in between this check and the writes after it.
 */
export async function fenceRun(tx: Tx, run: HeldRun, now: Date): Promise<void> {
  const held = await tx.agentRun.updateMany({
    where: { id: run.runId, runnerEpoch: run.epoch },
    data: { updatedAt: now },
  });
  if (held.count !== 1) throw runSuperseded(run);
}

/** Whether the runner's epoch is still the run's: a read, for work before any write (fenceRun checks again). */
export async function runStillHeld(db: Db, run: HeldRun): Promise<boolean> {
  return (await db.agentRun.count({ where: { id: run.runId, runnerEpoch: run.epoch } })) === 1;
}

/** The run's row updated while the runner's epoch is still the run's, else runSuperseded (one statement). */
export async function updateHeldRun(
  db: Db,
  run: HeldRun,
  data: { fork?: string; startCommit?: string; transcript?: object; updatedAt: Date },
): Promise<void> {
  const updated = await db.agentRun.updateMany({ where: { id: run.runId, runnerEpoch: run.epoch }, data });
  if (updated.count !== 1) throw runSuperseded(run);
}
