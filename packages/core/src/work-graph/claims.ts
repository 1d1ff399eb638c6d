import { type HeldResources, resourceOverlap } from "./overlap.ts";

/**
 * Intents, claims and challenges (docs/agents.md, Intents, claims and challenges), pure. A Task declares
 * what it intends to touch when it is dispatched (intent.declared), holds it from the moment its
 * Agent holds the Task (claim.acquired) until its run ends (claim.released). A claim that names a
 * path another active Task already holds, exactly, raises a challenge against that holder: the
 * holder is the Agent to wake, since its work was planned without the newcomer.
 */

/** Events that speak of one Task's hold on its paths (one cause per Task attempt). */
export const HOLD_EVENT_TYPES = ["intent.declared", "claim.acquired", "challenge.raised", "claim.released"] as const;

export function isHoldEvent(eventType: string): boolean {
  return (HOLD_EVENT_TYPES as readonly string[]).includes(eventType);
}

export interface Holder {
  agentId: string;
  taskId: string;
  held: HeldResources;
}

export interface ChallengeToRaise {
  /** The earlier claim the new one contests. */
  heldBy: { taskId: string; agentId: string };
  /** The paths both claims name exactly, sorted. */
  paths: string[];
  reason: string;
}

const sortedUnique = (xs: readonly string[]) => [...new Set(xs)].sort();

/**
 * The challenges one claim raises: one per other active holder whose held paths it names exactly
 * (a prefix-only overlap is a question for the overlap classifier, not a challenge).
 */
export function challengesFor(
  claim: { taskId: string; agentId: string; paths: readonly string[]; prefixes?: readonly string[] },
  holders: readonly Holder[],
): ChallengeToRaise[] {
  const claimed = [...claim.paths, ...(claim.prefixes ?? [])];
  const out: ChallengeToRaise[] = [];
  for (const h of holders) {
    if (h.agentId === claim.agentId || h.taskId === claim.taskId) continue;
    const o = resourceOverlap(claimed, h.held);
    if (o.kind !== "exact") continue;
    const paths = sortedUnique(o.pairs.map((p) => p.agentPath));
    out.push({
      heldBy: { taskId: h.taskId, agentId: h.agentId },
      paths,
      reason: `the claim of ${claim.taskId} names ${paths.join(", ")}, which ${h.taskId} (${h.agentId}) holds`,
    });
  }
  return out;
}
