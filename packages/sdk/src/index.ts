export {
  type ApprovalResult,
  type CandidateDetail,
  type CandidateSummary,
  type ChangeDetail,
  type CreateChangeOptions,
  createRhumbatronClient,
  type FixtureDraft,
  type FixturePublishResult,
  type Membership,
  type PolicyUpdateResult,
  type Project,
  type ProjectPolicy,
  type PromoteResult,
  type RhumbatronClient,
  type RhumbatronClientOptions,
  type RouterOutputs,
  type SandboxBudgetResult,
  type SandboxMeter,
  TRPC_PATH,
  type Whoami,
} from "./client.ts";
export {
  formatIssues,
  type InputIssue,
  isRhumbatronError,
  RHUMBATRON_ERROR_CODES,
  RhumbatronError,
  type RhumbatronErrorCode,
  toRhumbatronError,
} from "./errors.ts";
export { type PolicyFile, parsePolicy, parsePolicyJson } from "./policy.ts";
export {
  type CandidateView,
  outcomeOf,
  type TaskView,
  type Transition,
  type WatchOptions,
  type WatchOutcome,
  type WatchResult,
  type WatchSnapshot,
  type WatchUpdate,
} from "./watch.ts";
export { type ChangeDraft, parseChange, parseChangeJson } from "./work-graph.ts";
