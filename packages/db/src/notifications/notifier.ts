import { randomUUID } from "node:crypto";
import {
  type AnyEventEnvelope,
  AUDIENCE_ROLES,
  NOTIFYING_EVENT_TYPES,
  type NotificationFacts,
  type NotificationPlan,
  notificationPlan,
  notificationText,
  recipientsOf,
} from "@rhumbatron/core";
import type { DeliveredEvent, Subscription } from "@rhumbatron/runtime";
import type { TxContext } from "../transaction.ts";

/**
 * notifier: turns the Events people must hear of into notifications in their inbox
 * (docs/notifications.md). Which Events notify whom is core's `notificationPlan`; here the
 * audience is read in the claiming transaction (the tenant's approvers or operators, or the
 * Change's requester), and one row per (Event, person) is written. The consumer applies an Event
 * once (processed_events), and the unique (event_id, user_id) makes even a forced replay write
 * nothing twice.
 */
export const NOTIFIER = "notifier";

const notifies = (type: string) => (NOTIFYING_EVENT_TYPES as readonly string[]).includes(type);

interface ChangeFacts {
  title: string;
  createdBy: string | null;
}

/** The people the plan names, as members of the Event's tenant now (someone who left hears nothing). */
async function audienceOf(
  ctx: TxContext,
  e: AnyEventEnvelope,
  plan: NotificationPlan,
  change: ChangeFacts | null,
): Promise<string[]> {
  if (plan.audience === "requester") {
    if (!change?.createdBy) return [];
    const member = await ctx.tx.membership.findUnique({
      where: { tenantId_userId: { tenantId: e.tenantId, userId: change.createdBy } },
      select: { userId: true },
    });
    return member ? [member.userId] : [];
  }
  const members = await ctx.tx.membership.findMany({
    where: { tenantId: e.tenantId, role: { in: [...AUDIENCE_ROLES[plan.audience]] } },
    select: { userId: true },
    orderBy: { userId: "asc" },
  });
  return members.map((m) => m.userId);
}

/** What the text says, read from the rows the Event names. */
async function factsOf(ctx: TxContext, e: AnyEventEnvelope, change: ChangeFacts | null): Promise<NotificationFacts> {
  const project = await ctx.tx.project.findUnique({ where: { id: e.projectId }, select: { name: true } });
  const facts: NotificationFacts = { projectName: project?.name ?? e.projectId, changeTitle: change?.title ?? null };
  switch (e.eventType) {
    case "candidate.rejected": {
      // The Candidate's own reason carries an approver's note ("approval rejected: <note>").
      const c = await ctx.tx.candidate.findUnique({
        where: { id: e.payload.candidateId },
        select: { rejectionReason: true },
      });
      return { ...facts, reason: c?.rejectionReason ?? e.payload.reason };
    }
    case "canonical.advanced":
      return { ...facts, generation: e.payload.toGeneration };
    case "dead_letter.recorded":
      return { ...facts, reason: e.payload.reason, commandType: e.payload.commandType };
    default:
      return facts;
  }
}

/**
 * The person the notification is about: the requester of a Change that waits for approval; for the
 * rest, the person who acted (an approver who rejected, whoever promoted), when a person did.
 */
function actorOf(e: AnyEventEnvelope, plan: NotificationPlan, change: ChangeFacts | null): string | null {
  if (plan.kind === "approval_requested") return change?.createdBy ?? null;
  return e.actor.kind === "user" ? e.actor.id : null;
}

/** Writes the Event's notifications; returns how many were new. */
export async function notifyOf(ctx: TxContext, e: AnyEventEnvelope): Promise<number> {
  const plan = notificationPlan(e);
  if (!plan) return 0;
  const change = e.changeId
    ? await ctx.tx.change.findUnique({ where: { id: e.changeId }, select: { title: true, createdBy: true } })
    : null;
  const people = recipientsOf(await audienceOf(ctx, e, plan, change), e.actor);
  if (people.length === 0) return 0;
  const { title, detail } = notificationText(plan.kind, await factsOf(ctx, e, change));
  const written = await ctx.tx.notification.createMany({
    data: people.map((userId) => ({
      id: `ntf_${randomUUID()}`,
      tenantId: e.tenantId,
      userId,
      eventId: e.eventId,
      kind: plan.kind,
      projectId: e.projectId,
      changeId: e.changeId,
      candidateId: plan.candidateId,
      deadLetterId: plan.deadLetterId,
      actorId: actorOf(e, plan, change),
      title,
      detail,
      occurredAt: new Date(e.timestamp),
    })),
    skipDuplicates: true,
  });
  return written.count;
}

/** Events that answer an approval request: once one arrives, nobody is still asked. */
const SETTLES_APPROVAL = ["approval.granted", "approval.rejected", "candidate.rejected", "candidate.stale"];

/**
 * An approval request that someone answered (or whose Candidate closed) is no longer waiting for
 * anyone: the other approvers' copies are marked read as of that Event, so an inbox never counts an
 * approval nobody can give any more. Returns how many were marked.
 */
export async function settleApprovalRequests(ctx: TxContext, e: AnyEventEnvelope): Promise<number> {
  if (!SETTLES_APPROVAL.includes(e.eventType)) return 0;
  const candidateId = (e.payload as { candidateId?: unknown }).candidateId;
  if (typeof candidateId !== "string") return 0;
  const settled = await ctx.tx.notification.updateMany({
    where: { tenantId: e.tenantId, candidateId, kind: "approval_requested", readAt: null },
    data: { readAt: new Date(e.timestamp) },
  });
  return settled.count;
}

export function notifierSubscription(): Subscription {
  return {
    name: NOTIFIER,
    // One group per project: a failure holds back only that project's notifications.
    group(events) {
      const groups = new Map<string, DeliveredEvent[]>();
      for (const d of events) groups.set(d.event.projectId, [...(groups.get(d.event.projectId) ?? []), d]);
      return [...groups.values()];
    },
    async apply(ctx, events) {
      for (const { event } of events) {
        if (notifies(event.eventType)) await notifyOf(ctx, event);
        await settleApprovalRequests(ctx, event);
      }
    },
  };
}
