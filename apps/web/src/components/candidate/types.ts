import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../server/routers/_app.ts";

type Outputs = inferRouterOutputs<AppRouter>;
export type CandidateDetail = Outputs["candidate"]["get"];
export type CandidateEvidence = CandidateDetail["evidence"][number];
export type PromoteResult = Outputs["candidate"]["promote"];
export type CandidateInterdiff = Outputs["candidate"]["interdiff"];
