import type { Db } from "../client.ts";

/**
 * People by name, wherever the product shows who did something (docs/notifications.md, The inbox:
 * people are shown by name, not by ID). A user
 * ID is never shown bare: a user whose row is gone reads "a removed user", and the system actors
 * read as what people call them.
 */
const SYSTEM_ACTORS: Record<string, string> = {
  "landing-queue": "the landing queue",
  worker: "Rhumbatron",
  system: "Rhumbatron",
};

export const REMOVED_USER = "a removed user";

/** Users' names by ID. */
export async function namesOf(db: Db, ids: readonly (string | null | undefined)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((i): i is string => typeof i === "string" && i.length > 0))];
  if (wanted.length === 0) return new Map();
  const users = await db.user.findMany({ where: { id: { in: wanted } }, select: { id: true, name: true } });
  return new Map(users.map((u) => [u.id, u.name]));
}

/** An Event's actor (`{kind, id}`, or the feed's `kind:id`) as a reader names it. */
export function actorName(actor: { kind?: string; id?: string } | string, names: ReadonlyMap<string, string>): string {
  const a = typeof actor === "string" ? splitActor(actor) : actor;
  if (!a.id) return "Rhumbatron";
  if (a.kind === "user") return names.get(a.id) ?? REMOVED_USER;
  return SYSTEM_ACTORS[a.id] ?? `Rhumbatron (${a.id})`;
}

/** The user IDs among actors, for one namesOf call. */
export function userIdsOf(actors: readonly ({ kind?: string; id?: string } | string)[]): string[] {
  return actors.flatMap((x) => {
    const a = typeof x === "string" ? splitActor(x) : x;
    return a.kind === "user" && a.id ? [a.id] : [];
  });
}

function splitActor(s: string): { kind?: string; id?: string } {
  const i = s.indexOf(":");
  return i < 0 ? { id: s } : { kind: s.slice(0, i), id: s.slice(i + 1) };
}

/** A user's name and email, or null when there is no such user. */
export async function userIdentity(db: Db, userId: string): Promise<{ name: string; email: string } | null> {
  return db.user.findUnique({ where: { id: userId }, select: { name: true, email: true } });
}
