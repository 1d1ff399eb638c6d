import { projectViewDelta, type RhumbatronConfig, summarizeEvent } from "@rhumbatron/core";
import type { DeliveredEvent, Subscription } from "@rhumbatron/runtime";
import type { TxContext } from "../transaction.ts";

/**
 * project-view-projector: keeps each project's view (counts by state, canonical generation, last
 * Event) and its live feed. One apply call per project per batch, at most
 * config.eventRouter.projectorMaxApplyCallsPerRun per delivery.
 */
export const PROJECTOR = "project-view-projector";

function byProject(events: DeliveredEvent[]): DeliveredEvent[][] {
  const groups = new Map<string, DeliveredEvent[]>();
  for (const e of events) groups.set(e.event.projectId, [...(groups.get(e.event.projectId) ?? []), e]);
  return [...groups.values()];
}

async function applyProjectDelta(ctx: TxContext, events: DeliveredEvent[]): Promise<void> {
  const projectId = events[0]?.event.projectId;
  if (!projectId) return;
  const { tx } = ctx;
  let generation: number | null = null;
  for (const { event } of events) {
    const delta = projectViewDelta(event);
    for (const ent of delta.entities) {
      await tx.$executeRaw`
        INSERT INTO project_view_entities (project_id, kind, entity_id, state, event_id)
        VALUES (${projectId}, ${ent.kind}, ${ent.id}, ${ent.state}, ${event.eventId})
        ON CONFLICT (project_id, kind, entity_id) DO UPDATE SET state = EXCLUDED.state, event_id = EXCLUDED.event_id`;
    }
    if (delta.canonicalGeneration !== undefined) generation = Math.max(generation ?? 0, delta.canonicalGeneration);
    await tx.$executeRaw`
      INSERT INTO project_events (project_id, event_id, event_type, change_id, task_id, actor, summary, occurred_at)
      VALUES (${projectId}, ${event.eventId}, ${event.eventType}, ${event.changeId}, ${event.taskId},
        ${`${event.actor.kind}:${event.actor.id}`}, ${summarizeEvent(event)}, ${new Date(event.timestamp)})
      ON CONFLICT (event_id) DO NOTHING`;
  }
  const counts = await tx.$queryRaw<{ kind: string; state: string; n: number }[]>`
    SELECT kind, state, count(*)::int AS n FROM project_view_entities WHERE project_id = ${projectId} GROUP BY kind, state`;
  const of = (kind: string) => Object.fromEntries(counts.filter((c) => c.kind === kind).map((c) => [c.state, c.n]));
  const changesTotal = counts.filter((c) => c.kind === "change").reduce((n, c) => n + c.n, 0);
  const lastEvent = events.at(-1)?.event;
  if (!lastEvent) return;
  const now = new Date();
  await tx.projectView.upsert({
    where: { projectId },
    create: {
      projectId,
      canonicalGeneration: generation ?? lastEvent.canonicalGeneration,
      changesTotal,
      tasksByState: of("task"),
      candidatesByState: of("candidate"),
      eventCount: events.length,
      lastEventId: lastEvent.eventId,
      lastEventType: lastEvent.eventType,
      lastEventAt: new Date(lastEvent.timestamp),
    },
    update: {
      ...(generation !== null ? { canonicalGeneration: generation } : {}),
      changesTotal,
      tasksByState: of("task"),
      candidatesByState: of("candidate"),
      eventCount: { increment: events.length },
      lastEventId: lastEvent.eventId,
      lastEventType: lastEvent.eventType,
      lastEventAt: new Date(lastEvent.timestamp),
      updatedAt: now,
    },
  });
}

export function projectorSubscription(
  config: RhumbatronConfig,
  hooks: { beforeApply?: (events: DeliveredEvent[]) => void } = {},
): Subscription {
  return {
    name: PROJECTOR,
    group: byProject,
    maxGroups: config.eventRouter.projectorMaxApplyCallsPerRun,
    async apply(ctx, events) {
      hooks.beforeApply?.(events);
      await applyProjectDelta(ctx, events);
    },
  };
}
