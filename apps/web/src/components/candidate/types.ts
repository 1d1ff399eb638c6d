import type { AppRouter } from "@rhumbatron/api";
import type { inferRouterOutputs } from "@trpc/server";

type Outputs = inferRouterOutputs<AppRouter>;
export type CandidateDetail = Outputs["candidate"]["get"];
export type CandidateEvidence = CandidateDetail["evidence"][number];
export type PromoteResult = Outputs["candidate"]["promote"];
export type CandidateInterdiff = Outputs["candidate"]["interdiff"];
export type CandidateListItem = Outputs["candidate"]["list"][number];
