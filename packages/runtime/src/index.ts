/**
 * The message runtime on Postgres: transactions with after-commit hooks, nudges, the outbox and its
 * publisher, ordered streams and their consumers, command queues, workflow instances and leases.
 * It speaks SQL over its own tables and knows nothing of Changes or Candidates; packages/db's
 * domain code uses it (ARCHITECTURE.md, The rooms).
 */
export * from "./events/consumer.ts";
export * from "./events/outbox.ts";
export * from "./events/publisher.ts";
export * from "./events/stream.ts";
export * from "./leases/holders.ts";
export * from "./leases/resource-lease.ts";
export * from "./leases/working.ts";
export * from "./nudge.ts";
export * from "./queues/consumer.ts";
export * from "./queues/enqueue.ts";
export * from "./queues/workflow-runs.ts";
export * from "./sql.ts";
export * from "./transaction.ts";
