import {
  CANDIDATE_STATUS_SETS,
  type ClassifierAsk,
  classifierBudget,
  commandCapWindow,
  finalDecision,
  type OverlapClassifier,
  type RouterSnapshot,
  routeEvent,
} from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { DeliveredEvent, Subscription } from "../events/consumer.ts";
import { changeEvent } from "../events/factory.ts";
import { appendToOutbox, lockResourceRow } from "../events/outbox.ts";
import { enqueueCommand } from "../queues/enqueue.ts";
import { type TxContext, withTransaction } from "../transaction.ts";
import { loadTasks } from "./dispatch.ts";
import type { WorkGraphDeps } from "./shared.ts";

/**
 * causal-router: for each fresh Event, the pure decision (routeEvent) over a snapshot read in the
 * claiming transaction, then the commands enqueued in that same transaction, so a claim commits
 * together with the commands it caused. Prefix-only overlaps go to the overlap classifier, within
 * its daily call cap; an abstention, a low probability or a reached cap wakes the Agent. The
 * classifier is asked before the claiming transaction opens (prepare), so a slow model answer
 * holds no lock: the cap is counted in a short transaction of its own.
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
    select: { id: true, changeId: true, agentId: true, intents: true },
  });
  return {
    maxActiveAgents,
    tasks,
    activeAgents: running.map((r) => ({
      agentId: r.agentId as string,
      taskId: r.id,
      changeId: r.changeId,
      held: r.intents as { paths: string[]; prefixes: string[] },
    })),
    candidates: await ctx.tx.candidate.findMany({
      where: { projectId: e.projectId, status: { in: [...CANDIDATE_STATUS_SETS.live] } },
      select: { id: true, baseGeneration: true, status: true },
    }),
  };
}

/** What the classifier said about one wake (keyed by the wake's command ID), asked before the transaction. */
interface Verdict {
  wake: boolean;
  /** The model's probability, when a call was made (recorded as a model_route metric point). */
  probability?: number;
}

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
    const snap = await withTransaction(db, (ctx) => snapshot(ctx, event, deps.config.causal.maxActiveAgentsPerChange));
    const decision = routeEvent(event, snap);
    if (decision.kind === "ignore") continue;
    for (const ask of decision.ask) verdicts.set(ask.wake.commandId, await askClassifier(db, event, ask, deps));
  }
  return verdicts;
}

/** In the transaction: the verdict asked before it; an overlap that appeared since wakes (as an abstention). */
async function decideWake(
  ctx: TxContext,
  e: DeliveredEvent["event"],
  ask: ClassifierAsk,
  verdicts: Map<string, Verdict>,
  deps: CausalRouterDeps,
): Promise<boolean> {
  const verdict = verdicts.get(ask.wake.commandId);
  if (!verdict) return true;
  if (verdict.probability !== undefined) {
    await ctx.tx.metricPoint.createMany({
      data: [
        {
          dataset: deps.config.eventRouter.metricsDataset,
          name: "model_route",
          eventId: `route_${ask.wake.commandId}`,
          tenantId: e.tenantId,
          projectId: e.projectId,
          value: verdict.probability,
          occurredAt: deps.now(),
        },
      ],
      skipDuplicates: true,
    });
  }
  return verdict.wake;
}

/** canonical.advanced: a Candidate built on an older generation can no longer be promoted. */
async function markCandidateStale(
  ctx: TxContext,
  candidateId: string,
  cause: DeliveredEvent["event"],
  deps: CausalRouterDeps,
) {
  const c = await ctx.tx.candidate.findUnique({ where: { id: candidateId } });
  if (!c) return;
  const owner = await lockResourceRow(ctx, `change:${c.changeId}`);
  const moved = await ctx.tx.candidate.updateMany({
    where: { id: candidateId, status: { in: [...CANDIDATE_STATUS_SETS.live] } },
    data: { status: "stale" },
  });
  if (moved.count === 0) return;
  const generation = (cause.payload as { toGeneration: number }).toGeneration;
  await appendToOutbox(
    ctx,
    [
      changeEvent(owner, "candidate.stale", {
        key: candidateId,
        actor: { kind: "system", id: CAUSAL_ROUTER },
        canonicalGeneration: generation,
        causedBy: cause.eventId,
        now: deps.now(),
        payload: { candidateId, canonicalGeneration: generation },
      }),
    ],
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
    prepare: (db, events) => prepareVerdicts(db, events, deps),
    async apply(ctx, events, prepared) {
      const verdicts = prepared instanceof Map ? (prepared as Map<string, Verdict>) : new Map<string, Verdict>();
      for (const { event } of events) {
        const decision = routeEvent(event, await snapshot(ctx, event, deps.config.causal.maxActiveAgentsPerChange));
        if (decision.kind === "ignore") continue;
        for (const c of decision.commands) await enqueueCommand(ctx, c, deps);
        for (const ask of decision.ask)
          if (await decideWake(ctx, event, ask, verdicts, deps)) await enqueueCommand(ctx, ask.wake, deps);
        for (const id of decision.staleCandidates) await markCandidateStale(ctx, id, event, deps);
      }
    },
  };
}
