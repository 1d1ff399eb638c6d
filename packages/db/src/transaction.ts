import type { Db } from "./client.ts";
import type { Prisma } from "./generated/prisma/client.ts";

export type Tx = Prisma.TransactionClient;

/** Work to run once the transaction has committed (for example an Inngest nudge). Never runs on rollback. */
export type AfterCommit = () => Promise<void> | void;

export interface TxContext {
  tx: Tx;
  afterCommit(fn: AfterCommit): void;
}

export interface TransactionOptions {
  isolationLevel?: Prisma.TransactionIsolationLevel;
  timeoutMs?: number;
  maxWaitMs?: number;
}

/**
 * Runs `fn` in one interactive transaction: every state change and every outbox row it writes
 * commit together or not at all. Hooks registered with `afterCommit` run after a successful commit;
 * a failing hook is reported through `onHookError` and never undoes the committed work.
 */
export async function withTransaction<T>(
  db: Db,
  fn: (ctx: TxContext) => Promise<T>,
  options: TransactionOptions & { onHookError?: (err: unknown) => void } = {},
): Promise<T> {
  const hooks: AfterCommit[] = [];
  const result = await db.$transaction((tx) => fn({ tx, afterCommit: (hook) => hooks.push(hook) }), {
    ...(options.isolationLevel ? { isolationLevel: options.isolationLevel } : {}),
    timeout: options.timeoutMs ?? 15_000,
    maxWait: options.maxWaitMs ?? 5_000,
  });
  for (const hook of hooks) {
    try {
      await hook();
    } catch (err) {
      options.onHookError?.(err);
    }
  }
  return result;
}
