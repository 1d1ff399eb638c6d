import type { AppRouter } from "@rhumbatron/api";
import type { inferRouterOutputs } from "@trpc/server";

type Ops = inferRouterOutputs<AppRouter>["operations"];
export type DeadLetterRow = Ops["deadLetters"][number];
export type OutboxRow = Ops["outbox"][number];
export type StreamLagRow = Ops["streamLag"][number];
export type SandboxMeterReading = inferRouterOutputs<AppRouter>["sandbox"]["meter"];

/** Operator panels ask again on this interval: they watch the system move. */
export const OPS_REFETCH_MS = 5_000;
