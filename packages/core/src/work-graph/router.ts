import { commandIds, newCommand, type TypedCommand } from "../commands/catalogue.ts";
import { ROUTED_EVENT_TYPES } from "../events/catalogue.ts";
import type { AnyEventEnvelope, EventEnvelope } from "../events/envelope.ts";
import { candidateStatusIn } from "../verification/candidate-status.ts";
import { type ChallengeToRaise, challengesFor, isHoldEvent } from "./claims.ts";
import { type GraphTask, planDispatch } from "./graph.ts";
import { type HeldResources, resourceOverlap } from "./overlap.ts";

/**
 * The causal router's decision (docs/protocol.md, Causal routing), pure: given one fresh Event and a snapshot
 * of the state it concerns, which commands follow. Deterministic rules only; a prefix-only overlap
 * comes back as a question for the overlap classifier, which the caller asks.
 */
export interface ActiveAgent {
  agentId: string;
  taskId: string;
  changeId: string;
  /** The Task's attempt (1 when not given): a retried Task is a new holder. */
  attempt?: number;
  held: HeldResources;
}

export interface RouterSnapshot {
  maxActiveAgents: number;
  /** The Event's Change with its Tasks (after the Event), when the Event belongs to a Change. */
  tasks: (GraphTask & { id: string })[];
  /** Agents holding a Task in the Event's project (for canonical.advanced) or Change. */
  activeAgents: ActiveAgent[];
  /**
   * Candidates of the project that are still in play: `stackedOn` is the Candidate below one of a
   * speculative stack (docs/landing.md), and `stackedOnChange` its Change.
   */
  candidates: {
    id: string;
    changeId?: string;
    baseGeneration: number;
    status: string;
    stackedOn?: string | null;
    stackedOnChange?: string | null;
  }[];
}

/** A command the router sends: made by the catalogue's factory, so its payload is checked. */
export type RoutedCommand = TypedCommand;

export interface ClassifierAsk {
  agent: ActiveAgent;
  eventPaths: string[];
  pairs: { eventPath: string; agentPath: string }[];
  /** The wake to send if the classifier says wake (or abstains, or its daily cap is reached). */
  wake: RoutedCommand;
}

export type RouterDecision =
  | { kind: "ignore"; reason: "task_ready" | "informational" | "not_applicable" }
  | {
      kind: "route";
      commands: RoutedCommand[];
      ask: ClassifierAsk[];
      staleCandidates: string[];
      /** Challenges a claim raises against earlier holders of the same paths (the caller writes them). */
      challenges: ChallengeToRaise[];
    };

const OVERLAP_TYPES = [
  "intent.declared",
  "challenge.raised",
  "changeset.published",
  "claim.acquired",
  "claim.released",
];

/** A Task's hold on its paths, as the cause of a wake (one per Task attempt). */
interface Hold {
  taskId: string;
  attempt: number;
}

function wakeFor(
  e: EventEnvelope,
  a: ActiveAgent,
  reason: string,
  overlap?: { eventPaths: string[]; pairs: { eventPath: string }[]; hold: Hold | null },
): RoutedCommand {
  return newCommand("agent.wake", {
    // An intent, a claim and a challenge of one Task attempt are one cause: one wake per holder.
    commandId: overlap?.hold
      ? commandIds.wakeOnHold(a.agentId, a.attempt ?? 1, overlap.hold.taskId, overlap.hold.attempt)
      : commandIds.wakeOnEvent(a.agentId, e.eventId),
    projectId: e.projectId,
    changeId: a.changeId,
    taskId: a.taskId,
    // The paths let the wake consumer check the overlap again, and the woken run re-check it.
    payload: {
      agentId: a.agentId,
      reason,
      causeEventId: e.eventId,
      causeType: e.eventType,
      ...(overlap
        ? {
            eventPaths: overlap.eventPaths,
            overlapping: [...new Set(overlap.pairs.map((p) => p.eventPath))].sort(),
            ...(e.taskId ? { causeTaskId: e.taskId } : {}),
          }
        : {}),
    },
  });
}

function indexBuild(e: EventEnvelope, generation: number): RoutedCommand {
  return newCommand("index.build", {
    commandId: commandIds.indexBuild(e.projectId, generation),
    projectId: e.projectId,
    payload: { generation },
  });
}

function recompose(e: EventEnvelope, staleCandidateId: string, generation: number): RoutedCommand {
  const changeId = e.changeId ?? "";
  return newCommand("candidate.create", {
    commandId: commandIds.recompose(changeId, generation, staleCandidateId),
    projectId: e.projectId,
    changeId,
    payload: { causeEventId: e.eventId, recomposeFrom: staleCandidateId, generation },
  });
}

/** candidate.land for a Candidate (of the Event's Change unless `changeId` says whose). */
function land(e: EventEnvelope, candidateId: string, why: string, changeId?: string): RoutedCommand {
  return newCommand("candidate.land", {
    commandId: commandIds.land(candidateId, why),
    projectId: e.projectId,
    ...(changeId ? { changeId } : {}),
    payload: { candidateId, causeEventId: e.eventId },
  });
}

/** The live Candidates stacked directly on `candidateId`. */
const stackedOn = (snap: RouterSnapshot, candidateId: string) =>
  snap.candidates.filter((c) => c.stackedOn === candidateId && candidateStatusIn(c.status, "live")).map((c) => c.id);

/** The live Candidates stacked directly on a Candidate of `changeId`. */
const stackedOnChange = (snap: RouterSnapshot, changeId: string | null | undefined) =>
  changeId
    ? snap.candidates
        .filter((c) => c.stackedOnChange === changeId && candidateStatusIn(c.status, "live"))
        .map((c) => c.id)
    : [];

function dispatch(e: EventEnvelope): RoutedCommand {
  return newCommand("change.dispatch", {
    commandId: commandIds.dispatchAfter(e.eventId),
    projectId: e.projectId,
    changeId: e.changeId,
    payload: { causeEventId: e.eventId },
  });
}

const route = (
  commands: RoutedCommand[],
  ask: ClassifierAsk[] = [],
  staleCandidates: string[] = [],
  challenges: ChallengeToRaise[] = [],
): RouterDecision => ({
  kind: "route",
  commands,
  ask,
  staleCandidates,
  challenges,
});

/**
 * Intent, claim, challenge and ChangeSet Events against the active Agents: an exact overlap wakes,
 * a prefix-only one asks the classifier, none does nothing; the Event's own Agent is skipped. A
 * claim that exactly names another holder's paths raises a challenge instead (the challenge wakes
 * that holder); a challenge wakes only the holder it names; a release wakes nobody: whoever
 * overlaps heard of the hold when it began, and hears of the content from changeset.published.
 */
function routeOverlap(e: AnyEventEnvelope, snap: RouterSnapshot): RouterDecision {
  if (e.eventType === "claim.released") return route([]);
  const p = e.payload as {
    agentId: string;
    paths: string[];
    prefixes?: string[];
    attempt?: number;
    heldBy?: { taskId: string; agentId: string };
  };
  const eventPaths = [...p.paths, ...(p.prefixes ?? [])];
  const hold = isHoldEvent(e.eventType) && e.taskId ? { taskId: e.taskId, attempt: p.attempt ?? 1 } : null;
  const challenges =
    e.eventType === "claim.acquired" && e.taskId
      ? challengesFor({ taskId: e.taskId, agentId: p.agentId, paths: eventPaths }, snap.activeAgents)
      : [];
  const challenged = new Set(challenges.map((c) => c.heldBy.taskId));
  const heldBy = e.eventType === "challenge.raised" ? p.heldBy : undefined;
  const commands: RoutedCommand[] = [];
  const ask: ClassifierAsk[] = [];
  for (const a of snap.activeAgents) {
    if (a.agentId === p.agentId || challenged.has(a.taskId)) continue;
    if (heldBy && (a.taskId !== heldBy.taskId || a.agentId !== heldBy.agentId)) continue;
    const o = resourceOverlap(eventPaths, a.held);
    const overlap = { eventPaths, pairs: o.pairs, hold };
    if (o.kind === "exact") commands.push(wakeFor(e, a, "exact_overlap", overlap));
    else if (o.kind === "prefix")
      ask.push({ agent: a, eventPaths, pairs: o.pairs, wake: wakeFor(e, a, "prefix_overlap", overlap) });
  }
  return route(commands, ask, [], challenges);
}

/**
 * canonical.advanced. Built on an older generation, or stacked on a Candidate other than the one
 * that landed: it can no longer land. One stacked on the one that landed is now on canonical
 * itself, and lands if it is ready (the handler checks).
 */
function routeAdvanced(e: EventEnvelope<"canonical.advanced">, snap: RouterSnapshot): RouterDecision {
  const p = e.payload;
  const live = snap.candidates.filter((c) => candidateStatusIn(c.status, "live"));
  const stale = live
    .filter(
      (c) =>
        c.baseGeneration < p.toGeneration ||
        (c.baseGeneration === p.toGeneration && (c.stackedOn ?? p.candidateId) !== p.candidateId),
    )
    .map((c) => c.id);
  const nowOnCanonical = live.filter((c) => c.stackedOn === p.candidateId && c.status === "verified");
  return route(
    [
      ...snap.activeAgents.map((a) => wakeFor(e, a, "canonical_advanced")),
      indexBuild(e, p.toGeneration),
      ...nowOnCanonical.map((c) => land(e, c.id, "stacked", c.changeId)),
    ],
    [],
    stale,
  );
}

export function routeEvent(e: AnyEventEnvelope, snap: RouterSnapshot): RouterDecision {
  if (e.eventType === "task.ready") return { kind: "ignore", reason: "task_ready" };
  if (!(ROUTED_EVENT_TYPES as readonly string[]).includes(e.eventType))
    return { kind: "ignore", reason: "informational" };

  switch (e.eventType) {
    case "task.completed":
    case "task.failed": {
      // Completion readies dependents; completion or failure frees an Agent slot for a waiting Task.
      const plan = planDispatch(snap.tasks, snap.maxActiveAgents);
      return plan.markReady.length || plan.wake.length ? route([dispatch(e)]) : route([]);
    }
    case "verification.started": {
      const p = e.payload;
      if (p.reason !== "work_graph_completed" || !e.changeId) return { kind: "ignore", reason: "not_applicable" };
      return route([
        newCommand("candidate.create", {
          commandId: commandIds.compose(e.eventId),
          projectId: e.projectId,
          changeId: e.changeId,
          payload: { causeEventId: e.eventId },
        }),
      ]);
    }
    case "canonical.advanced":
      return routeAdvanced(e, snap);
    case "candidate.stale": {
      // Canonical moved under the Change's Candidate (or the Candidate below it in a stack left
      // it): compose the same ChangeSets again on what is current. One command per stale
      // Candidate, so a redelivered Event creates nothing twice. What was stacked on it goes too.
      const p = e.payload;
      if (!e.changeId) return { kind: "ignore", reason: "not_applicable" };
      return route([recompose(e, p.candidateId, p.canonicalGeneration)], [], stackedOn(snap, p.candidateId));
    }
    case "candidate.composed":
      // Nothing of its own; the caller asks the Change waiting for a place on the stack (its top is composed now).
      return route([]);
    case "candidate.rejected":
      // A Candidate of a stack failed: the ones above it are composed again without it.
      return route([], [], stackedOn(snap, e.payload.candidateId));
    case "change.cancelled":
      return route([], [], stackedOnChange(snap, e.changeId));
    case "change.landing_changed":
      // A Change that no longer lands by itself cannot carry a stack.
      return route([], [], e.payload.landWhenReady ? [] : stackedOnChange(snap, e.changeId));
    case "candidate.verified":
    case "approval.granted": {
      // Ready, or one step nearer: the landing queue promotes it if its Change lands when ready
      // and nothing else holds it (the handler checks both when the command runs).
      const p = e.payload;
      if (!e.changeId) return { kind: "ignore", reason: "not_applicable" };
      return route([land(e, p.candidateId, e.eventType === "approval.granted" ? "approved" : "verified", e.changeId)]);
    }
    case "attempt.picked": {
      // The picked attempt's Candidate may land now (docs/attempts.md); the handler checks the rest.
      const p = e.payload;
      if (!e.changeId || !p.candidateId) return { kind: "ignore", reason: "not_applicable" };
      return route([
        newCommand("candidate.land", {
          commandId: commandIds.land(p.candidateId, `picked${p.attempt}`),
          projectId: e.projectId,
          changeId: e.changeId,
          payload: { candidateId: p.candidateId, causeEventId: e.eventId },
        }),
      ]);
    }
    case "artifact.promoted":
      return route([indexBuild(e, e.payload.generation)]);
    default:
      if (!OVERLAP_TYPES.includes(e.eventType)) return { kind: "ignore", reason: "informational" };
      return routeOverlap(e, snap);
  }
}
