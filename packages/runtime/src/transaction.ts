import type { SqlClient, SqlDatabase, TransactionSettings } from "./sql.ts";

/** Work to run once the transaction has committed (for example an Inngest nudge). Never runs on rollback. */
export type AfterCommit = () => Promise<void> | void;

/**
 * The transaction client of the application that owns the schema. The runtime only sends SQL
 * through it; the application widens this interface to its own client by declaration merging
 * (packages/db/src/transaction.ts), so its handlers get the client they write with.
 */
// biome-ignore lint/suspicious/noEmptyInterface: widened by the application (declaration merging)
export interface HostTransaction {}

/** One open transaction and its after-commit hooks. */
export interface TxContext {
  tx: HostTransaction & SqlClient;
  afterCommit(fn: AfterCommit): void;
}

export interface TransactionOptions {
  isolationLevel?: TransactionSettings["isolationLevel"];
  timeoutMs?: number;
  maxWaitMs?: number;
}

/**
 * Runs `fn` in one interactive transaction: every state change and every outbox row it writes
 * commit together or not at all. Hooks registered with `afterCommit` run after a successful commit;
 * a failing hook is reported through `onHookError` and never undoes the committed work.
 */
export async function withTransaction<T>(
  db: SqlDatabase,
  fn: (ctx: TxContext) => Promise<T>,
  options: TransactionOptions & { onHookError?: (err: unknown) => void } = {},
): Promise<T> {
  const hooks: AfterCommit[] = [];
  const result = await db.$transaction((tx: TxContext["tx"]) => fn({ tx, afterCommit: (hook) => hooks.push(hook) }), {
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
