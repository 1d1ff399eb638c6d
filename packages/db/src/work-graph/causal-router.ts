import {
  CANDIDATE_STATUS_SETS,
  type ChallengeToRaise,
  type ClassifierAsk,
  classifierBudget,
  commandCapWindow,
  DomainError,
  finalDecision,
  type OverlapClassifier,
  ROUTED_EVENT_TYPES,
  type RouterSnapshot,
  routeEvent,
} from "@rhumbatron/core";
import type { DeliveredEvent, Subscription } from "@rhumbatron/runtime";
import { appendToOutbox, enqueueCommand } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { changeEvent } from "../events/factory.ts";
import { type LockedChange, lockResourceRow } from "../events/owners.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { markCandidateStale } from "./candidate-stale.ts";
import { loadTasks } from "./dispatch.ts";
import type { WorkGraphDeps } from "./shared.ts";
import { askWaitingOnStack, lockStack } from "./stack.ts";

/**
 * causal-router: for each fresh Event, the pure decision (routeEvent) over a snapshot read in the
 * claiming transaction, then the commands enqueued in that same transaction, so a claim commits
 * together with the commands it caused. Prefix-only overlaps go to the overlap classifier, within
 * its daily call cap; an abstention, a low probability or a reached cap wakes the Agent. The
 * classifier is asked before the claiming transaction opens (prepare), so a slow model answer
 * holds no lock: the cap is counted in a short transaction of its own. A claim that names another
 * holder's paths raises challenge.raised; a classifier verdict that is used is recorded as
 * model.routed (docs/agents.md, Intents, claims and challenges).
 */
export const CAUSAL_ROUTER = "causal-router";
export const CLASSIFIER_COUNTER = "overlap_classifier_calls";

export interface CausalRouterDeps extends WorkGraphDeps {
  classifier: OverlapClassifier;
}

async function snapshot(ctx: TxContext, e: DeliveredEvent["event"], maxActiveAgents: number): Promise<RouterSnapshot> {
  const tasks = e.changeId ? await loadTasks(ctx, e.changeId) : [];
  const running = await ctx.tx.task.findMany({
    where: { state: "running", agentId: { not: null }, change: { projectId: e.projectId } },
    select: { id: true, changeId: true, agentId: true, intents: true, attempt: true },
  });
  return {
    maxActiveAgents,
    tasks,
    activeAgents: running.map((r) => ({
      agentId: r.agentId as string,
      taskId: r.id,
      changeId: r.changeId,
      attempt: r.attempt,
      held: r.intents as { paths: string[]; prefixes: string[] },
    })),
    candidates: await stackSnapshot(ctx, e.projectId),
  };
}

/** The project's live Candidates, each with the Candidate (and Change) it is stacked on. */
async function stackSnapshot(ctx: TxContext, projectId: string): Promise<RouterSnapshot["candidates"]> {
  const live = await ctx.tx.candidate.findMany({
    where: { projectId, status: { in: [...CANDIDATE_STATUS_SETS.live] } },
    select: { id: true, changeId: true, baseGeneration: true, status: true, stackedOn: true },
  });
  const belowIds = [...new Set(live.flatMap((c) => (c.stackedOn ? [c.stackedOn] : [])))];
  const below = belowIds.length
    ? await ctx.tx.candidate.findMany({ where: { id: { in: belowIds } }, select: { id: true, changeId: true } })
    : [];
  const changeOf = new Map(below.map((b) => [b.id, b.changeId]));
  return live.map((c) => ({ ...c, stackedOnChange: c.stackedOn ? (changeOf.get(c.stackedOn) ?? null) : null }));
}

/** Events after which the speculative stack may have room for a Change that waits (stack.ts). */
const STACK_MOVES = new Set([
  "candidate.composed",
  "canonical.advanced",
  "candidate.stale",
  "candidate.rejected",
  "change.cancelled",
  "change.landing_changed",
]);

/** What the classifier said about one wake (keyed by the wake's command ID), asked before the transaction. */
interface Verdict {
  wake: boolean;
  /** The model's probability and name, when a call was made (recorded as model.routed and a model_route point). */
  probability?: number;
  model?: string;
}

/** Informational Events need no snapshot: the router takes no action on them. */
const isRouted = (type: string) => (ROUTED_EVENT_TYPES as readonly string[]).includes(type);

/**
 * Counts one classifier call against the daily cap, in a transaction of its own that commits at
 * once, so the counter's row lock is never held while a model answers. False when the cap is reached.
 */
async function reserveClassifierCall(db: Db, deps: CausalRouterDeps, now: Date): Promise<boolean> {
  const cap = deps.config.causal.classifierDailyCallCap;
  const counted = await db.$queryRaw<{ count: number }[]>`
    INSERT INTO usage_counters (counter, scope_id, "window", count) VALUES (${CLASSIFIER_COUNTER}, ${deps.config.env}, ${commandCapWindow(now)}, 1)
    ON CONFLICT (counter, scope_id, "window") DO UPDATE SET count = usage_counters.count + 1
    WHERE usage_counters.count < ${cap} RETURNING count`;
  // The counter only moves while below the cap, so no row back means the cap was already reached.
  const callsBefore = counted.length ? (counted[0]?.count ?? 1) - 1 : cap;
  return classifierBudget(callsBefore, cap) !== "cap_reached";
}

async function askClassifier(
  db: Db,
  e: DeliveredEvent["event"],
  ask: ClassifierAsk,
  deps: CausalRouterDeps,
): Promise<Verdict> {
  if (!(await reserveClassifierCall(db, deps, deps.now()))) {
    deps.log?.(
      { eventId: e.eventId, agentId: ask.agent.agentId },
      "overlap classifier daily cap reached: waking without a call",
    );
    return { wake: true };
  }
  // Outside any transaction: a slow model holds no lock.
  const verdict = await deps.classifier.classify({
    changeId: ask.agent.changeId,
    eventType: e.eventType,
    eventPaths: ask.eventPaths,
    agent: {
      agentId: ask.agent.agentId,
      taskId: ask.agent.taskId,
      paths: ask.agent.held.paths,
      prefixes: ask.agent.held.prefixes,
    },
    overlaps: ask.pairs,
  });
  return {
    wake: finalDecision(verdict, deps.config.causal.classifierAbstainBelow) === "wake",
    probability: verdict.probability,
    model: verdict.model,
  };
}

/**
 * Before the transaction: routes each event over a snapshot read in a short read-only
 * transaction, and asks the classifier about every prefix-only overlap. Without a model
 * (abstain) nothing is asked: abstaining wakes.
 */
async function prepareVerdicts(
  db: Db,
  events: DeliveredEvent[],
  deps: CausalRouterDeps,
): Promise<Map<string, Verdict>> {
  const verdicts = new Map<string, Verdict>();
  if (deps.classifier.name === "abstain") return verdicts;
  for (const { event } of events) {
    if (!isRouted(event.eventType)) continue;
    const snap = await withTransaction(db, (ctx) => snapshot(ctx, event, deps.config.causal.maxActiveAgentsPerChange));
    const decision = routeEvent(event, snap);
    if (decision.kind === "ignore") continue;
    for (const ask of decision.ask) {
      // One cause is one wake (an intent and a claim of one Task share it): ask about it once.
      if (verdicts.has(ask.wake.commandId) || (await wakeSent(db, ask.wake.commandId))) continue;
      verdicts.set(ask.wake.commandId, await askClassifier(db, event, ask, deps));
    }
  }
  return verdicts;
}

/** Whether this wake is on its queue, or was consumed into a run already (the consumer deletes what it acks). */
async function wakeSent(db: Db, commandId: string): Promise<boolean> {
  const queued = await db.queueMessage.findUnique({
    where: { queue_commandId: { queue: "agent-wakeups", commandId } },
    select: { id: true },
  });
  if (queued) return true;
  return (await db.agentRun.findUnique({ where: { wakeCommandId: commandId }, select: { id: true } })) !== null;
}

/**
 * In the transaction: the verdict asked before it; an overlap that appeared since wakes (as an
 * abstention). A verdict from a model call is recorded as model.routed (ID keyed by the wake
 * command and the Event asked about) and its model_route point, which carries the probability and the Event's ID, so the
 * analytics projector's point for the same Event is a duplicate and counts nothing twice.
 */
async function decideWake(
  ctx: TxContext,
  e: DeliveredEvent["event"],
  ask: ClassifierAsk,
  verdicts: Map<string, Verdict>,
  deps: CausalRouterDeps,
): Promise<boolean> {
  const verdict = verdicts.get(ask.wake.commandId);
  if (!verdict) return true;
  const owner = verdict.probability !== undefined && e.changeId ? await lockChange(ctx, e.changeId) : null;
  if (verdict.probability !== undefined && owner) {
    const now = deps.now();
    const routed = changeEvent(owner, "model.routed", {
      taskId: e.taskId,
      // One per model call: the intent and the claim of one Task share a wake, each may be asked about.
      key: `${ask.wake.commandId}:${e.eventId}`,
      actor: { kind: "system", id: CAUSAL_ROUTER },
      causedBy: e.eventId,
      now,
      payload: {
        purpose: "overlap_wake",
        model: verdict.model ?? "unknown",
        agentId: ask.agent.agentId,
        decision: verdict.wake ? "wake" : "skip",
        ...(verdict.probability >= 0 && verdict.probability <= 1 ? { probability: verdict.probability } : {}),
      },
    });
    await appendToOutbox(ctx, [routed], deps);
    await ctx.tx.metricPoint.createMany({
      data: [
        {
          dataset: deps.config.eventRouter.metricsDataset,
          name: "model_route",
          eventId: routed.eventId,
          tenantId: e.tenantId,
          projectId: e.projectId,
          value: verdict.probability,
          occurredAt: now,
        },
      ],
      skipDuplicates: true,
    });
  }
  return verdict.wake;
}

/**
 * claim.acquired that names another holder's paths exactly: challenge.raised on the claiming Task's
 * Change, one per holder (ID keyed by the claim Event and the holder), routed like any Event.
 */
async function raiseChallenges(
  ctx: TxContext,
  e: DeliveredEvent["event"],
  challenges: ChallengeToRaise[],
  deps: CausalRouterDeps,
) {
  if (challenges.length === 0 || !e.changeId || e.eventType !== "claim.acquired") return;
  const owner = await lockChange(ctx, e.changeId);
  if (!owner) return;
  const claim = e.payload;
  const now = deps.now();
  await appendToOutbox(
    ctx,
    challenges.map((c) =>
      changeEvent(owner, "challenge.raised", {
        taskId: e.taskId,
        key: `${e.eventId}:${c.heldBy.taskId}`,
        actor: { kind: "system", id: CAUSAL_ROUTER },
        causedBy: e.eventId,
        now,
        payload: {
          agentId: claim.agentId,
          paths: c.paths,
          reason: c.reason,
          ...(claim.attempt ? { attempt: claim.attempt } : {}),
          heldBy: c.heldBy,
        },
      }),
    ),
    deps,
  );
}

/** The Event's Change, locked; null when it is gone (its project was archived). */
function lockChange(ctx: TxContext, changeId: string): Promise<LockedChange | null> {
  return lockResourceRow(ctx, `change:${changeId}`).catch((err: unknown) => {
    if (err instanceof DomainError && err.code === "NOT_FOUND") return null;
    throw err;
  });
}

/**
 * canonical.advanced: a Candidate built on an older generation can no longer be promoted; a
 * stack's Candidate whose Candidate below left (stale, rejected, cancelled) cannot either.
 */
async function staleOnAdvance(
  ctx: TxContext,
  candidateId: string,
  cause: DeliveredEvent["event"],
  deps: CausalRouterDeps,
) {
  const c = await ctx.tx.candidate.findUnique({
    where: { id: candidateId },
    select: { changeId: true, projectId: true },
  });
  if (!c) return;
  const project = await ctx.tx.project.findUniqueOrThrow({
    where: { id: c.projectId },
    select: { canonicalGeneration: true },
  });
  await markCandidateStale(
    ctx,
    // The router stale-marks Candidates of the Event's own project, so of its tenant.
    { id: candidateId, changeId: c.changeId, projectId: c.projectId, tenantId: cause.tenantId },
    {
      canonicalGeneration: (cause.payload as { toGeneration?: number }).toGeneration ?? project.canonicalGeneration,
      actor: CAUSAL_ROUTER,
      causedBy: cause.eventId,
    },
    deps,
  );
}

export function causalRouterSubscription(deps: CausalRouterDeps): Subscription {
  return {
    name: CAUSAL_ROUTER,
    // One group per Change (or per project for project-wide facts): a failure holds back only its own.
    group(events) {
      const groups = new Map<string, DeliveredEvent[]>();
      for (const d of events) {
        const k = d.event.changeId ?? d.event.projectId;
        groups.set(k, [...(groups.get(k) ?? []), d]);
      }
      return [...groups.values()];
    },
    // Without a model (abstain) there is nothing to ask, so no read before the transaction either.
    ...(deps.classifier.name === "abstain"
      ? {}
      : { prepare: (db: Db, events: DeliveredEvent[]) => prepareVerdicts(db, events, deps) }),
    async apply(ctx, events, prepared) {
      const verdicts = prepared instanceof Map ? (prepared as Map<string, Verdict>) : new Map<string, Verdict>();
      // The stack lock before any row or outbox lock, in the order createCandidate takes them: a
      // group is one Change's or one project's, so one project.
      const moves = events.find(({ event }) => STACK_MOVES.has(event.eventType));
      if (moves) await lockStack(ctx, moves.event.projectId);
      for (const { event } of events) {
        if (!isRouted(event.eventType)) continue;
        const decision = routeEvent(event, await snapshot(ctx, event, deps.config.causal.maxActiveAgentsPerChange));
        if (decision.kind === "ignore") continue;
        for (const c of decision.commands) await enqueueCommand(ctx, c, deps);
        for (const ask of decision.ask)
          if (await decideWake(ctx, event, ask, verdicts, deps)) await enqueueCommand(ctx, ask.wake, deps);
        for (const id of decision.staleCandidates) await staleOnAdvance(ctx, id, event, deps);
        await raiseChallenges(ctx, event, decision.challenges, deps);
        if (STACK_MOVES.has(event.eventType)) await askWaitingOnStack(ctx, event.projectId, event.eventId, deps);
      }
    },
  };
}
