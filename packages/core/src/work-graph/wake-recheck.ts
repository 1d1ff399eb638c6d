import { type HeldResources, resourceOverlap } from "./overlap.ts";

/**
 * What a woken Agent does with a wake once it reaches it (docs/agents.md, Intents, claims and challenges),
 * pure. The wake consumer already checked that the Agent held its Task; by the time the wake reaches
 * the Agent's run, the other Task may have let go, or the run may have ended. So the run checks
 * again, against the state now: does what caused the wake (the other Task's hold, or its published
 * ChangeSet) still touch what this Task touches (its intents, and the files its run has edited)?
 *  - no: the wake is stale; the run stops handling it and says why (a false wakeup);
 *  - yes: the Agent goes on. A ChangeSet of another Task meets this Task's at composition: in the
 *    same Change they are composed together, and across Changes the one that lands second has its
 *    Candidate recomposed on the new generation (docs/landing.md), so no rebase happens mid-run.
 */
export interface WakeToCheck {
  reason: string;
  causeType?: string | undefined;
  causeTaskId?: string | undefined;
  /** What the causing Event touched (its paths and prefixes). */
  eventPaths?: readonly string[] | undefined;
}

export interface WokenTask {
  state: string;
  /** The Agent holding the Task now. */
  agentId: string | null;
  intents: HeldResources;
  /** Files the run has written or deleted so far (empty before its tools ran). */
  editedPaths: readonly string[];
}

/** The causing Task as it is now. */
export interface WakeCause {
  taskKey: string;
  state: string;
  changeId: string;
  changeStatus: string;
  held: HeldResources;
  /** Paths of its latest published ChangeSet, if any. */
  changeSetPaths: readonly string[] | null;
}

export interface WakeRecheck {
  stale: boolean;
  action: "continue" | "stop";
  /** What overlaps now (this Task's side), sorted; empty when stale. */
  paths: string[];
  note: string;
}

const stop = (note: string): WakeRecheck => ({ stale: true, action: "stop", paths: [], note: `stopped: ${note}` });
const goOn = (paths: string[], note: string): WakeRecheck => ({
  stale: false,
  action: "continue",
  paths,
  note: `continued: ${note}`,
});

export function recheckWake(
  agentId: string,
  wake: WakeToCheck,
  task: WokenTask,
  cause: WakeCause | null,
  sameChange: boolean,
): WakeRecheck {
  if (task.state !== "running") return stop(`the Task is ${task.state}: its run ended before the wake reached it`);
  if (task.agentId !== agentId) return stop("another Agent holds the Task now");
  if (wake.reason === "canonical_advanced")
    return goOn([], "canonical advanced; this Task's ChangeSet is composed on the generation current when it is done");
  const touched: HeldResources = {
    paths: [...new Set([...task.intents.paths, ...task.editedPaths])],
    prefixes: task.intents.prefixes,
  };
  if (!cause) {
    const o = resourceOverlap(wake.eventPaths ?? [], touched);
    if (o.kind === "none") return stop("nothing the event touched overlaps what this Task touches any more");
    return goOn(overlapping(o.pairs), `the event touched ${overlapping(o.pairs).join(", ")}, which this Task touches`);
  }
  const who = `task ${cause.taskKey}`;
  if (cause.changeStatus === "cancelled") return stop(`${who}'s Change was cancelled: nothing of it will land`);
  const holds = cause.state === "running" && wake.causeType !== "changeset.published";
  const now = [...(holds ? [...cause.held.paths, ...cause.held.prefixes] : []), ...(cause.changeSetPaths ?? [])];
  const o = resourceOverlap(now, touched);
  if (o.kind === "none") {
    if (holds) return stop(`${who} holds nothing this Task touches any more`);
    const published = cause.changeSetPaths ? "its ChangeSet touches nothing this Task touches" : "it published nothing";
    return stop(`${who} is ${cause.state} and no longer holds its paths; ${published}`);
  }
  const paths = overlapping(o.pairs);
  const what = holds ? "holds" : "changed";
  const meet = sameChange
    ? "both ChangeSets are composed together into the Change's Candidate"
    : "whichever Change lands second is recomposed on the first";
  return goOn(paths, `${who} ${what} ${paths.join(", ")}, which this Task also touches; ${meet}`);
}

const overlapping = (pairs: { agentPath: string }[]) => [...new Set(pairs.map((p) => p.agentPath))].sort();
