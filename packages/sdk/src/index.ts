export {
  type ApprovalResult,
  type CandidateDetail,
  type CandidateSummary,
  type ChangeDetail,
  type CreateChangeOptions,
  createRhumbatronClient,
  type Membership,
  type Project,
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
