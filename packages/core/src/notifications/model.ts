import type { EventType } from "../events/catalogue.ts";
import type { Actor, AnyEventEnvelope } from "../events/envelope.ts";

/**
 * A person's inbox (docs/notifications.md). Each notifying Event tells a set of people
 * one thing, once: the notifier subscription writes one notification per (Event, person).
 *
 *  - approval.requested -> everyone who may approve in the tenant: an approval is waiting for you;
 *  - canonical.advanced -> the Change's requester: your Change landed;
 *  - candidate.rejected -> the Change's requester: it was rejected, or it conflicted (a merge conflict);
 *  - dead_letter.recorded -> the tenant's operators: a command waits for Retry or Dismiss.
 */
export const NOTIFICATION_KINDS = [
  "approval_requested",
  "change_promoted",
  "change_rejected",
  "change_conflicted",
  "dead_letter",
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export type NotificationAudience = "approvers" | "operators" | "requester";

/**
 * The roles of each audience that is a role: the role the matching action needs and every role
 * above it (ROLE_ORDER in packages/api/src/roles.ts; the API's notification tests check the two
 * agree). Approvers approve (candidate.approve); operators Retry or Dismiss a dead letter.
 */
export const AUDIENCE_ROLES = {
  approvers: ["approver", "operator", "admin"],
  operators: ["operator", "admin"],
} as const satisfies Record<Exclude<NotificationAudience, "requester">, readonly string[]>;

export const NOTIFYING_EVENT_TYPES = [
  "approval.requested",
  "canonical.advanced",
  "candidate.rejected",
  "dead_letter.recorded",
] as const satisfies readonly EventType[];

export interface NotificationPlan {
  kind: NotificationKind;
  audience: NotificationAudience;
  candidateId: string | null;
  deadLetterId: string | null;
}

/** What an Event notifies, and whom; null for Events that notify nobody. */
export function notificationPlan(e: AnyEventEnvelope): NotificationPlan | null {
  const plan = (
    kind: NotificationKind,
    audience: NotificationAudience,
    ids: { candidateId?: string; deadLetterId?: string } = {},
  ): NotificationPlan => ({
    kind,
    audience,
    candidateId: ids.candidateId ?? null,
    deadLetterId: ids.deadLetterId ?? null,
  });
  switch (e.eventType) {
    case "approval.requested":
      return plan("approval_requested", "approvers", { candidateId: e.payload.candidateId });
    case "canonical.advanced":
      // A promotion names its Change; a canonical move without one has no requester to tell.
      return e.changeId ? plan("change_promoted", "requester", { candidateId: e.payload.candidateId }) : null;
    case "candidate.rejected":
      return plan(e.payload.reason === "merge conflict" ? "change_conflicted" : "change_rejected", "requester", {
        candidateId: e.payload.candidateId,
      });
    case "dead_letter.recorded":
      return plan("dead_letter", "operators", { deadLetterId: e.payload.deadLetterId });
    default:
      return null;
  }
}

/**
 * Who of `people` is told: a person is never told of what they did themselves (the approver who
 * promoted their own Change needs no notice that it landed).
 */
export function recipientsOf(people: readonly string[], actor: Actor): string[] {
  const unique = [...new Set(people)];
  return actor.kind === "user" ? unique.filter((p) => p !== actor.id) : unique;
}

/** How the inbox names the notification's person (its actor): "requested by Ada Lovelace". */
export const NOTIFICATION_ACTOR_PHRASE: Record<NotificationKind, string> = {
  approval_requested: "requested by",
  change_promoted: "promoted by",
  change_rejected: "by",
  change_conflicted: "by",
  dead_letter: "by",
};

/** What the notification's text is made of, read in the notifier's transaction. */
export interface NotificationFacts {
  projectName: string;
  /** The Change's title; null when the Event names none (a dead letter). */
  changeTitle: string | null;
  /** Why a Candidate was rejected (its rejection reason), or why a command was dead-lettered. */
  reason?: string | null;
  /** The generation a promotion made. */
  generation?: number | null;
  /** The dead-lettered command's type. */
  commandType?: string | null;
}

const quoted = (title: string | null) => (title ? `“${title}”` : "a Change");

/** The notification's title and one line of detail, in the product's words. */
export function notificationText(kind: NotificationKind, f: NotificationFacts): { title: string; detail: string } {
  switch (kind) {
    case "approval_requested":
      return {
        title: `Approval waiting: ${quoted(f.changeTitle)}`,
        detail: `Its Candidate passed verification in ${f.projectName} and waits for an approval of its composed tree.`,
      };
    case "change_promoted":
      return {
        title: `Your Change ${quoted(f.changeTitle)} landed`,
        detail:
          f.generation === null || f.generation === undefined
            ? `It was promoted in ${f.projectName}.`
            : `It was promoted to S${f.generation} in ${f.projectName}.`,
      };
    case "change_rejected":
      return {
        title: `Your Change ${quoted(f.changeTitle)} was rejected`,
        detail: f.reason ? `In ${f.projectName}: ${f.reason}.` : `Its Candidate was rejected in ${f.projectName}.`,
      };
    case "change_conflicted":
      return {
        title: `Your Change ${quoted(f.changeTitle)} conflicted`,
        detail: `Its ChangeSets conflict on the current generation of ${f.projectName}: re-run the conflicting Tasks.`,
      };
    case "dead_letter":
      return {
        title: `Dead letter: ${f.commandType ?? "a command"} in ${f.projectName}`,
        detail: `${f.reason ?? "It ran out of retries"}. Retry or Dismiss it on Operations.`,
      };
  }
}
