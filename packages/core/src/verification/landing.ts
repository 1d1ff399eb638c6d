/**
 * The landing queue (docs/landing.md): a Change marked "land when ready" is promoted without another
 * click as soon as its newest Candidate is verified and, where policy asks, approved for its exact
 * tree. Pure: the one place that says whether a Change may land now and, if not, the one thing it
 * waits for. The landing handler and the queue panel both read it, so they never disagree.
 */
export type LandingWait =
  | "tasks"
  | "composition"
  | "checks"
  | "approval"
  | "recomposition"
  | "conflict"
  | "rejected"
  | "blocked_task"
  | "landing"
  | "landed"
  | "cancelled"
  /** The project's queue is paused, or drains and this Change started after it began to. */
  | "paused"
  /** A Task's attempts wait for a person to pick one (docs/attempts.md). */
  | "attempt_pick"
  /** Verified on top of the Candidate below it in the speculative stack: lands right after that one. */
  | "stack";

/**
 * A project's landing queue as an admin set it: `running` lands what is ready; `paused` lands
 * nothing; `draining` lands only Changes whose Candidate was already composed when the drain began
 * (what was verifying finishes), and nothing that starts later, until it is resumed.
 */
export const LANDING_QUEUE_STATES = ["running", "paused", "draining"] as const;
export type LandingQueueState = (typeof LANDING_QUEUE_STATES)[number];

export interface LandingInput {
  changeStatus: string;
  tasks: { key: string; state: string }[];
  /** The Change's newest Candidate, or null before the first composition. */
  candidate: {
    id: string;
    status: string;
    approvalRequired: boolean;
    composedTree: string | null;
    rejectionReason: string | null;
  } | null;
  approval: { decision: string; treeHash: string } | null;
  /** Why a recomposition waits (the hourly limit), when it does. */
  recompositionHeld?: string | null;
  /** The project's queue; absent: running. */
  queue?: { state: LandingQueueState; since: Date | null };
  /** When the newest Candidate was created (a draining queue lands only those from before it began). */
  candidateCreatedAt?: Date | null;
  /** A Task asked for attempts and none is picked yet: nothing lands until one is. */
  attemptPickPending?: boolean;
  /**
   * The newest Candidate is stacked on another Change's Candidate that has not landed yet
   * (docs/landing.md, Speculative stacks): its base is that Candidate's composed tree.
   */
  stackedOn?: { changeId: string; title: string } | null;
  /** Every Task completed, and its Candidate waits for a place in the project's speculative stack. */
  stackWaiting?: boolean;
}

export interface LandingState {
  /** True when the Change may be promoted now. */
  ready: boolean;
  waitingFor: LandingWait;
  /** One line for people: what it waits for, and what they can do. */
  detail: string;
}

const COMPOSITION_REJECTIONS = new Set(["merge conflict", "composition conflict"]);

/** What a person does to go on from a rejected Candidate, in the words every surface uses. */
export const RETRY_TASKS_HINT =
  "retry the Change's Tasks (Retry on the Change page, or rhumbatron task retry <task>) to compose a new Candidate on the current generation";

/**
 * Whether the completed Tasks of a Change may run again: its newest Candidate could not be composed
 * (a conflict) or was rejected, by a check or by an approver. New ChangeSets make a new Candidate on
 * the generation current then, which is the way on once the base has moved: a rerun would only
 * check the old tree, which can no longer land. The API, the Change page and the landing queue
 * all ask this.
 */
export function completedTasksRerunnable(i: {
  changeStatus: string;
  newestCandidate: { status: string; rejectionReason: string | null; approvalRejected?: boolean } | null;
}): boolean {
  if (i.changeStatus === "promoted" || i.changeStatus === "cancelled") return false;
  if (i.changeStatus === "conflicted") return true;
  const c = i.newestCandidate;
  return c !== null && (c.status === "rejected" || c.approvalRejected === true);
}

export function landingState(i: LandingInput): LandingState {
  const c = i.candidate;
  if (i.changeStatus === "cancelled") return wait("cancelled", "the Change was cancelled");
  if (i.changeStatus === "promoted" || c?.status === "promoted") return wait("landed", "promoted");
  if (i.changeStatus === "open" || !c) {
    const stuck = i.tasks.filter((t) => t.state === "failed" || t.state === "blocked");
    if (stuck.length) {
      return wait("blocked_task", `Task ${stuck.map((t) => `${t.key} ${t.state}`).join(", ")}: retry it to go on`);
    }
    const done = i.tasks.filter((t) => t.state === "completed").length;
    if (done < i.tasks.length) return wait("tasks", `${done} of ${i.tasks.length} Tasks completed`);
    return wait("composition", composing(i));
  }
  if (i.attemptPickPending) {
    return wait(
      "attempt_pick",
      "its Task's attempts wait for one to be picked (Pick on the Change page, or rhumbatron change pick)",
    );
  }
  switch (c.status) {
    case "created":
      return wait("composition", composing(i));
    case "verifying":
      return wait("checks", `the checks are running${on(i)}`);
    case "stale":
      if (i.stackWaiting) return wait("composition", composing(i));
      return wait(
        "recomposition",
        i.recompositionHeld ?? "canonical moved past its base: being recomposed on the new generation",
      );
    case "rejected":
      return COMPOSITION_REJECTIONS.has(c.rejectionReason ?? "")
        ? wait("conflict", "its ChangeSets conflict on the current generation: re-run the conflicting Tasks")
        : wait(
            "rejected",
            `rejected (${c.rejectionReason ?? "a check failed"}): waits for a person; ${RETRY_TASKS_HINT}, or, while its base is still the current generation, rerun a check that errored or failed (rhumbatron candidate rerun)`,
          );
    case "verified": {
      if (i.stackedOn && (!c.approvalRequired || i.approval?.decision === "granted")) {
        return wait("stack", `verified${on(i)}: lands right after it, with no new check`);
      }
      const held = queueHold(i);
      if (!c.approvalRequired) {
        return held ?? { ready: true, waitingFor: "landing", detail: "verified; lands in queue order" };
      }
      if (i.approval?.decision === "granted" && i.approval.treeHash === c.composedTree) {
        return held ?? { ready: true, waitingFor: "landing", detail: "verified and approved; lands in queue order" };
      }
      if (i.approval?.decision === "rejected") {
        return wait("rejected", `an approver rejected it: waits for a person; ${RETRY_TASKS_HINT}`);
      }
      return wait("approval", "waits for an approver to approve the composed tree");
    }
    default:
      return wait("checks", `the Candidate is ${c.status}`);
  }
}

/** " on top of chg_…'s Candidate (…)", when the newest Candidate is stacked on one that has not landed. */
const on = (i: LandingInput) =>
  i.stackedOn ? ` on top of ${i.stackedOn.changeId}'s Candidate ("${i.stackedOn.title}")` : "";

const composing = (i: LandingInput) =>
  i.stackWaiting
    ? "waits for a place in the speculative stack: composed once the Candidate below it is, or one ahead lands"
    : "the Candidate is being composed";

/** What a paused or draining queue says of a Change that is otherwise ready; null when it may land. */
function queueHold(i: LandingInput): LandingState | null {
  const q = i.queue;
  if (!q || q.state === "running") return null;
  if (q.state === "paused") {
    return wait("paused", "ready, but an admin paused the project's landing queue: it lands once the queue is resumed");
  }
  const before = q.since !== null && i.candidateCreatedAt != null && i.candidateCreatedAt <= q.since;
  return before
    ? null
    : wait(
        "paused",
        "ready, but the project's landing queue drains (only what was verifying lands): it lands once the queue is resumed",
      );
}

function wait(waitingFor: LandingWait, detail: string): LandingState {
  return { ready: false, waitingFor, detail };
}

export interface ChangeLabel {
  label: string;
  tone: "neutral" | "good" | "bad";
  /** One line saying why, when the label is not the Change's own status. */
  hint: string | null;
}

/**
 * The word pages show for a Change. Its own status says "verifying" from composition until it is
 * promoted, and that is not true once its newest Candidate was rejected: the Change then waits for
 * a person, and says so. The Changes list, the project page and the Change page all show this.
 */
export function changeLabel(
  changeStatus: string,
  newest: { status: string; rejectionReason: string | null } | null,
): ChangeLabel {
  if (changeStatus === "verifying" && newest?.status === "rejected") {
    const conflict = COMPOSITION_REJECTIONS.has(newest.rejectionReason ?? "");
    return {
      label: conflict ? "conflicted" : "rejected",
      tone: "bad",
      hint: `its Candidate was rejected (${newest.rejectionReason ?? "a check failed"}); ${RETRY_TASKS_HINT}`,
    };
  }
  if (changeStatus === "verifying" && newest?.status === "verified")
    return { label: "verified", tone: "good", hint: null };
  const tone = changeStatus === "promoted" ? "good" : changeStatus === "conflicted" ? "bad" : "neutral";
  return { label: changeStatus, tone, hint: null };
}
