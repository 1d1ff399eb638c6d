import type { Actor, EventEnvelope, ResourceIntents } from "@rhumbatron/core";
import { changeEvent } from "./factory.ts";
import type { LockedChange } from "./owners.ts";

/**
 * A Task's intents and claims as Events (docs/agents.md, Intents, claims and challenges), written by the
 * transaction that makes the state change they record: intent.declared when the Task's wake is
 * sent (dispatchChange), claim.acquired when its Agent takes it (the dispatch wake), claim.released
 * when it stops running (finished, failed, blocked, cancelled). One of each per Task attempt: the
 * IDs are keyed by the Task and its attempt, so a retried write is ignored by the outbox.
 */
export interface HoldingTask {
  id: string;
  attempt: number;
  state: string;
  agentId: string | null;
  intents: unknown;
}

const intentsOf = (t: HoldingTask) => t.intents as ResourceIntents;

export function intentDeclared(
  owner: LockedChange,
  t: HoldingTask,
  agentId: string,
  o: { causedBy: string | null; now: Date },
): EventEnvelope {
  const { paths, prefixes } = intentsOf(t);
  return changeEvent(owner, "intent.declared", {
    taskId: t.id,
    attempt: t.attempt,
    actor: { kind: "system", id: "rhumbatron" },
    causedBy: o.causedBy,
    now: o.now,
    payload: { agentId, paths, prefixes, attempt: t.attempt },
  });
}

export function claimAcquired(
  owner: LockedChange,
  t: HoldingTask,
  agentId: string,
  o: { causedBy: string | null; now: Date },
): EventEnvelope {
  const { paths, prefixes } = intentsOf(t);
  return changeEvent(owner, "claim.acquired", {
    taskId: t.id,
    attempt: t.attempt,
    actor: { kind: "agent", id: agentId },
    causedBy: o.causedBy,
    now: o.now,
    payload: { agentId, paths, prefixes, attempt: t.attempt },
  });
}

/** claim.released for a Task read before it left `running` (it held its paths); none otherwise. */
export function claimReleased(
  owner: LockedChange,
  t: HoldingTask,
  o: { actor?: Actor; causedBy?: string | null; now: Date },
): EventEnvelope[] {
  if (t.state !== "running" || !t.agentId) return [];
  const { paths, prefixes } = intentsOf(t);
  return [
    changeEvent(owner, "claim.released", {
      taskId: t.id,
      attempt: t.attempt,
      actor: o.actor ?? { kind: "agent", id: t.agentId },
      causedBy: o.causedBy ?? null,
      now: o.now,
      payload: { agentId: t.agentId, paths, prefixes, attempt: t.attempt },
    }),
  ];
}
