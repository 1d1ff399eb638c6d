import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../server/routers/_app.ts";

type Ops = inferRouterOutputs<AppRouter>["operations"];
export type DeadLetterRow = Ops["deadLetters"][number];
export type OutboxRow = Ops["outbox"][number];
export type StreamLagRow = Ops["streamLag"][number];

/** Operator panels ask again on this interval: they watch the system move. */
export const OPS_REFETCH_MS = 5_000;
