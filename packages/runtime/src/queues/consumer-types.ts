import type { CommandEnvelope, DeliveryAction, HandlerResult, QueuePurpose } from "@rhumbatron/core";
import type { Database as Db } from "../sql.ts";
import type { TxContext } from "../transaction.ts";
import type { EnqueueDeps } from "./enqueue.ts";

/** What a queue consumer (consumer.ts) leases, hands its handlers, and reports. */

export interface LeasedMessage {
  id: bigint;
  queue: QueuePurpose;
  commandId: string;
  commandType: string;
  envelope: unknown;
  deliveries: number;
  originQueue: string | null;
  lastError: string | null;
}

export interface HandlerContext extends TxContext {
  message: LeasedMessage;
  command: CommandEnvelope;
  now: Date;
  /** What the handler's prepare returned (undefined without one). */
  prepared?: unknown;
}

/** What a handler's prepare gets: the command, outside any transaction. */
export interface PrepareContext {
  /** For reads, and for short transactions of its own (never one that waits on the outside work). */
  db: Db;
  message: LeasedMessage;
  command: CommandEnvelope;
  now: Date;
}

export interface CommandHandler {
  /** Command types this handler accepts; "*" accepts every type (the dead-letter consumer). */
  commandTypes: readonly string[] | "*";
  handle(ctx: HandlerContext): Promise<HandlerResult>;
  /**
   * Slow outside work (git, blobs, a promotion's own transactions), done before the ack's
   * transaction opens, so no transaction waits on it; its result is handed to handle as
   * ctx.prepared. A redelivery runs it again, so it must be idempotent (every such step is keyed).
   */
  prepare?(ctx: PrepareContext): Promise<unknown>;
  /** Each message gets a transaction of its own instead of sharing the batch's. */
  ownTransaction?: boolean;
  /** For queues whose exhaustion rule records the failure somewhere (indexing). */
  onExhausted?(ctx: TxContext, message: LeasedMessage, error: string): Promise<void>;
}

export interface QueueConsumerDeps extends EnqueueDeps {
  owner: string;
}

export interface QueueRunResult {
  queue: QueuePurpose;
  leased: number;
  actions: Record<DeliveryAction["action"], number>;
}
