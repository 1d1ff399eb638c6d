import type { Db } from "./client.ts";
import type { Prisma } from "./generated/prisma/client.ts";

/**
 * The runtime's transactions carry this package's Prisma transaction client: its handlers, workflow
 * steps and subscriptions get the client that db's functions write with.
 */
declare module "@rhumbatron/runtime" {
  interface HostTransaction extends Prisma.TransactionClient {}
  interface HostDatabase extends Db {}
}

export type Tx = Prisma.TransactionClient;
export {
  type AfterCommit,
  type TransactionOptions,
  type TxContext,
  withTransaction,
} from "@rhumbatron/runtime";
