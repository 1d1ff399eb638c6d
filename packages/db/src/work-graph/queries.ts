import { changeLabel, DomainError } from "@rhumbatron/core";
import type { Db } from "../client.ts";

/** A tenant's view of its Changes and Tasks; anything outside the tenant is NOT_FOUND. */
async function projectInTenant(db: Db, tenantId: string, projectId: string) {
  const p = await db.project.findFirst({ where: { id: projectId, tenantId }, select: { id: true } });
  if (!p) throw new DomainError("NOT_FOUND", `project ${projectId} not found`);
}

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

export async function listChanges(db: Db, q: { tenantId: string; projectId: string; limit: number }) {
  await projectInTenant(db, q.tenantId, q.projectId);
  const rows = await db.change.findMany({
    where: { projectId: q.projectId },
    orderBy: { createdAt: "desc" },
    take: q.limit,
    include: { tasks: { select: { state: true } } },
  });
  // Each Change's newest Candidate, for the label (core's changeLabel): one query for the page.
  const candidates = await db.candidate.findMany({
    where: { changeId: { in: rows.map((r) => r.id) } },
    orderBy: { createdAt: "desc" },
    select: { changeId: true, status: true, rejectionReason: true },
  });
  return rows.map(({ tasks, ...c }) => {
    const newest = candidates.find((k) => k.changeId === c.id) ?? null;
    return {
      id: c.id,
      title: c.title,
      riskTier: c.riskTier,
      status: c.status,
      label: changeLabel(c.status, newest),
      createdAt: c.createdAt,
      tasksByState: countBy(tasks.map((t) => t.state)),
    };
  });
}

export async function getChange(db: Db, q: { tenantId: string; changeId: string }) {
  const c = await db.change.findFirst({
    where: { id: q.changeId, project: { tenantId: q.tenantId } },
    include: { tasks: { orderBy: { position: "asc" } }, runs: { orderBy: { createdAt: "asc" } } },
  });
  if (!c) throw new DomainError("NOT_FOUND", `change ${q.changeId} not found`);
  return c;
}

export async function listTasks(db: Db, q: { tenantId: string; changeId: string }) {
  return (await getChange(db, q)).tasks;
}

/** The ChangeSet an Agent run published, or null. */
export async function changeSetOfRun(db: Db, runId: string): Promise<string | null> {
  const row = await db.changeSet.findFirst({ where: { runId }, select: { id: true } });
  return row?.id ?? null;
}

/** Whether a ChangeSet with this ID was recorded. */
export async function changeSetExists(db: Db, changeSetId: string): Promise<boolean> {
  return (await db.changeSet.count({ where: { id: changeSetId } })) > 0;
}

/** A Change's Tasks by key and title, in no particular order. */
export async function taskTitlesOf(db: Db, changeId: string): Promise<{ key: string; title: string }[]> {
  return db.task.findMany({ where: { changeId }, select: { key: true, title: true } });
}

/** Whether a Task was cancelled (its Change was): a running Agent stops at its next look. */
export async function taskCancelled(db: Db, taskId: string): Promise<boolean> {
  const t = await db.task.findUnique({ where: { id: taskId }, select: { state: true, blockedLimit: true } });
  return t?.state === "blocked" && t.blockedLimit === "cancelled";
}
