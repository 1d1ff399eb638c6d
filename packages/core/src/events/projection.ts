import type { AnyEventEnvelope, EventEnvelope } from "./envelope.ts";

/**
 * What one Event changes in a project's view (docs/protocol.md, Consumers): the last known state
 * of the entities it concerns, and the canonical generation. Counts by state are derived from the
 * entity states, so applying the same Event twice cannot double-count.
 */
export type ViewEntityKind = "change" | "task" | "candidate";

export interface ViewDelta {
  entities: { kind: ViewEntityKind; id: string; state: string }[];
  canonicalGeneration?: number;
}

export function projectViewDelta(e: AnyEventEnvelope): ViewDelta {
  const task = (state: string): ViewDelta =>
    e.taskId ? { entities: [{ kind: "task", id: e.taskId, state }] } : { entities: [] };
  const candidate = (state: string): ViewDelta => {
    const id = (e.payload as { candidateId?: string | null }).candidateId;
    return id ? { entities: [{ kind: "candidate", id, state }] } : { entities: [] };
  };
  switch (e.eventType) {
    case "change.created": {
      const p = e.payload;
      return {
        entities: [
          ...(e.changeId ? [{ kind: "change" as const, id: e.changeId, state: "open" }] : []),
          ...p.taskIds.map((id) => ({ kind: "task" as const, id, state: "pending" })),
        ],
      };
    }
    case "task.ready":
      return task("ready");
    case "task.started":
      return task("running");
    case "task.completed":
      return task("completed");
    case "task.failed":
      return task("failed");
    case "task.blocked":
      return task("blocked");
    case "task.retried":
      return task("pending");
    case "change.cancelled":
      return e.changeId ? { entities: [{ kind: "change", id: e.changeId, state: "cancelled" }] } : { entities: [] };
    case "verification.started":
      return e.changeId ? { entities: [{ kind: "change", id: e.changeId, state: "verifying" }] } : { entities: [] };
    case "candidate.created":
      return candidate("created");
    case "candidate.composed":
    case "check.rerun_requested":
      return candidate("verifying");
    case "candidate.verified":
      return candidate("verified");
    case "candidate.rejected":
      return candidate("rejected");
    case "candidate.stale":
      return candidate("stale");
    case "canonical.advanced": {
      const p = e.payload;
      return {
        entities: [
          { kind: "candidate", id: p.candidateId, state: "promoted" },
          ...(e.changeId ? [{ kind: "change" as const, id: e.changeId, state: "promoted" }] : []),
        ],
        canonicalGeneration: p.toGeneration,
      };
    }
    default:
      return { entities: [] };
  }
}

/** One line for the project's live feed. */
export function summarizeEvent(e: EventEnvelope): string {
  const p = e.payload as Record<string, unknown>;
  const who = `${e.actor.kind} ${e.actor.id}`;
  switch (e.eventType) {
    case "project.created":
      return `Project ${String(p.name)} created at S0`;
    case "change.created":
      return `Change "${String(p.title)}" created (${String(p.riskTier)} risk, ${(p.taskIds as unknown[]).length} tasks)`;
    case "task.ready":
      return `Task ${String(p.key)} is ready`;
    case "task.started":
      return `Task started by agent ${String(p.agentId)}`;
    case "task.completed":
      return "Task completed";
    case "task.failed":
      return `Task failed: ${String(p.reason)}`;
    case "task.retried":
      return `Task ${String(p.key)} retried (attempt ${String(p.attempt)}, was ${String(p.previousState)})`;
    case "task.blocked":
      return `Task blocked (${String(p.limit)}): ${String(p.reason)}`;
    case "candidate.created":
      return p.reason
        ? `Candidate ${String(p.candidateId)} created: ${String(p.reason)}`
        : `Candidate ${String(p.candidateId)} created on S${String(p.baseGeneration)}`;
    case "candidate.stale":
      return `Candidate ${String(p.candidateId)} is stale: canonical is at S${String(p.canonicalGeneration)}; recomposing`;
    case "change.cancelled":
      return `Change cancelled: ${String(p.reason)}`;
    case "change.landing_changed":
      return p.landWhenReady ? "Land when ready: on" : "Land when ready: off";
    case "candidate.recomposition_held":
      return `Recomposition on S${String(p.generation)} ${String(p.reason)}`;
    case "check.rerun_requested":
      return `Check ${String(p.checkId)} of ${String(p.candidateId)} rerun (${String(p.rerun)})`;
    case "candidate.rejected":
      return `Candidate ${String(p.candidateId)} rejected: ${String(p.reason)}`;
    case "canonical.advanced":
      return `Canonical advanced S${String(p.fromGeneration)} -> S${String(p.toGeneration)} from ${String(p.candidateId)}`;
    case "approval.granted":
      return `Approval granted for ${String(p.candidateId)}`;
    case "approval.rejected":
      return `Approval rejected for ${String(p.candidateId)}: ${String(p.note)}`;
    default:
      return `${e.eventType} by ${who}`;
  }
}
