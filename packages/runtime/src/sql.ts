import { empty, join, raw, Sql, sqltag } from "@prisma/client/runtime/client";

/**
 * What the runtime needs of a database connection: raw SQL, nothing of the schema's models. Every
 * statement of the runtime is written here as SQL over its own tables (outbox, streams, queues,
 * leases), so it knows nothing of the domain; packages/db hands it its Prisma client or transaction,
 * which has these methods.
 */
export interface SqlClient {
  // biome-ignore lint/suspicious/noExplicitAny: the values of a tagged template are any SQL parameter
  $queryRaw<T = unknown>(query: TemplateStringsArray | Sql, ...values: any[]): PromiseLike<T>;
  // biome-ignore lint/suspicious/noExplicitAny: as above
  $executeRaw(query: TemplateStringsArray | Sql, ...values: any[]): PromiseLike<number>;
}

export interface TransactionSettings {
  isolationLevel?: "ReadUncommitted" | "ReadCommitted" | "RepeatableRead" | "Serializable";
  timeout?: number;
  maxWait?: number;
}

/** A connection pool that runs interactive transactions (a Prisma client is one). */
export interface SqlDatabase extends SqlClient {
  // biome-ignore lint/suspicious/noExplicitAny: the transaction client's type is the caller's (packages/db binds it)
  $transaction<R>(fn: (tx: any) => Promise<R>, options?: TransactionSettings): Promise<R>;
}

/**
 * The database handle of the application that owns the schema, widened by it as HostTransaction is
 * (packages/db/src/transaction.ts): handlers' `prepare` steps get the handle the application reads with.
 */
// biome-ignore lint/suspicious/noEmptyInterface: widened by the application (declaration merging)
export interface HostDatabase {}
export type Database = HostDatabase & SqlDatabase;

/** The SQL template tag and its helpers (sql-template-tag, as Prisma re-exports it). */
export { empty, join, raw, Sql, sqltag as sql };
