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

/** The system actors that promote, by the name people know them by. */
const SYSTEM_PROMOTERS: Record<string, string> = { "landing-queue": "the landing queue" };

/** A user with no row any more (never shown as a bare ID). */
const UNKNOWN_USER = "unknown user";

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
  const userIds = [
    ...events.flatMap((e) => (e.actor?.kind === "user" && e.actor.id ? [e.actor.id] : [])),
    ...approvals.map((a) => a.decidedBy),
  ];
  const users = await db.user.findMany({
    where: { id: { in: [...new Set(userIds)] } },
    select: { id: true, name: true },
  });
  const nameOf = (id: string) => users.find((u) => u.id === id)?.name ?? UNKNOWN_USER;
  const promoter = (actor: Actor | null | undefined): GenerationPeople["promotedBy"] => {
    if (!actor?.id) return null;
    if (actor.kind === "user") return { kind: "user", name: nameOf(actor.id) };
    return { kind: "system", name: SYSTEM_PROMOTERS[actor.id] ?? actor.id };
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
