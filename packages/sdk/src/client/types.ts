import type { fixtureInput } from "@rhumbatron/core";
import type { inferRouterOutputs } from "@trpc/server";
import type { z } from "zod";
import type { AppRouter } from "../router.ts";

export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type Membership = RouterOutputs["tenants"]["mine"][number];
export type Project = RouterOutputs["projects"]["list"][number];
/** One project as its page shows it: status, where its source came from, and why it failed if it did. */
export type ProjectDetail = RouterOutputs["projects"]["overview"]["project"];
export type ChangeDetail = RouterOutputs["change"]["get"];
export type CandidateSummary = RouterOutputs["candidate"]["list"][number];
export type CandidateDetail = RouterOutputs["candidate"]["get"];
export type LandingResult = RouterOutputs["change"]["setLanding"];
export type LandingQueueEntry = RouterOutputs["landing"]["queue"][number];
export type LandingQueueStatus = RouterOutputs["landing"]["status"];
export type LandingQueueSetResult = RouterOutputs["landing"]["setState"];
export type RunContextPacket = RouterOutputs["change"]["contextPacket"];
export type TaskTranscripts = RouterOutputs["task"]["transcript"];
export type ApprovalResult = RouterOutputs["candidate"]["approve"];
export type PromoteResult = RouterOutputs["candidate"]["promote"];
export type CheckRerunResult = RouterOutputs["candidate"]["rerunCheck"];
export type ApprovalInterdiff = RouterOutputs["candidate"]["interdiff"];
export type CandidateChecks = RouterOutputs["candidate"]["checks"];
export type ProjectChecks = RouterOutputs["projects"]["checks"];
export type SandboxMeter = RouterOutputs["sandbox"]["meter"];
export type SandboxBudgetResult = RouterOutputs["sandbox"]["setBudget"];
export type FixturePublishResult = RouterOutputs["task"]["publishFixture"];
/** A tenant secret as the API lists it: its name, when and by whom it was set, never its value. */
export type TenantSecret = RouterOutputs["secrets"]["list"][number];
export type SetSecretResult = RouterOutputs["secrets"]["set"];
/** A fix by hand: what it does, and each file's whole new text or its deletion. */
export type FixtureDraft = z.input<typeof fixtureInput>;
export type ProjectPolicy = RouterOutputs["policy"]["get"];
export type PolicyUpdateResult = RouterOutputs["policy"]["update"];
/** One notification of the caller's inbox (docs/notifications.md). */
export type InboxItem = RouterOutputs["notifications"]["list"][number];
export type MarkReadResult = RouterOutputs["notifications"]["markRead"];

export interface CreateChangeOptions {
  /**
   * Idempotency key: a repeat with the same key returns the first Change (`created: false`).
   * Default: a new random key, so pass one to make a retry safe.
   */
  clientRequestId?: string;
  /** "Land when ready" (off by default): promoted without another click once verified and approved. */
  land?: boolean;
}
export type TestRow = RouterOutputs["tests"]["list"][number];
export type TestQuarantineResult = RouterOutputs["tests"]["quarantine"];
export type ChangeCandidate = RouterOutputs["change"]["candidates"][number];
