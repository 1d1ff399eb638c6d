import type { AppRouter } from "@rhumbatron/api";
import type { inferRouterOutputs } from "@trpc/server";

type Outputs = inferRouterOutputs<AppRouter>;
export type ChangeDetail = Outputs["change"]["get"];
export type AttemptsView = NonNullable<Outputs["change"]["attempts"]>;
export type AttemptView = AttemptsView["attempts"][number];
