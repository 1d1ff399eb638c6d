import { actorName, namesOf, REMOVED_USER, userIdsOf } from "../auth/people.ts";
import type { Db } from "../client.ts";

/** Who made a generation, by name, as the generation timeline shows it. */
export interface GenerationPeople {
  /**
   * Who promoted it: the person (users.name) or, for a Change that landed when ready, the landing
   * queue. Read from the actor of the generation's `artifact.promoted` Event; null for S0.
   */
  promotedBy: { kind: "user" | "system"; name: string } | null;
  /** The person whose approval of the exact tree let it through (users.name), when policy asked for one. */
  approvedBy: string | null;
}

type Actor = { kind?: string; id?: string };

/** The people of a project's promoted generations, by generation. */
export async function generationPeople(
  db: Db,
  projectId: string,
  generations: readonly { generation: number; candidateId: string | null }[],
): Promise<Map<number, GenerationPeople>> {
  const candidateIds = generations.flatMap((g) => (g.candidateId ? [g.candidateId] : []));
  if (candidateIds.length === 0) return new Map();
  const [events, approvals] = await Promise.all([
    db.$queryRaw<{ generation: number; actor: Actor | null }[]>`
      SELECT (envelope->'payload'->>'generation')::int AS generation, envelope->'actor' AS actor
      FROM outbox WHERE project_id = ${projectId} AND event_type = 'artifact.promoted'`,
    db.approval.findMany({
      where: { candidateId: { in: candidateIds }, decision: "granted" },
      select: { candidateId: true, decidedBy: true },
    }),
  ]);
  // One resolver for names everywhere (people.ts): a deleted user reads "a removed user".
  const names = await namesOf(db, [
    ...userIdsOf(events.flatMap((e) => (e.actor ? [e.actor] : []))),
    ...approvals.map((a) => a.decidedBy),
  ]);
  const nameOf = (id: string) => names.get(id) ?? REMOVED_USER;
  const promoter = (actor: Actor | null | undefined): GenerationPeople["promotedBy"] => {
    if (!actor?.id) return null;
    return { kind: actor.kind === "user" ? "user" : "system", name: actorName(actor, names) };
  };
  const out = new Map<number, GenerationPeople>();
  for (const g of generations) {
    if (!g.candidateId) continue;
    const approval = approvals.find((a) => a.candidateId === g.candidateId);
    out.set(g.generation, {
      promotedBy: promoter(events.find((e) => e.generation === g.generation)?.actor),
      approvedBy: approval ? nameOf(approval.decidedBy) : null,
    });
  }
  return out;
}
