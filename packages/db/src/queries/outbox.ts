import type { Db } from "../client.ts";
import type { OutboxState } from "../generated/prisma/enums.ts";

export interface OutboxRowView {
  eventId: string;
  projectId: string;
  projectName: string;
  eventType: string;
  state: OutboxState;
  attempts: number;
  streamIndex: number;
  nextAttemptAt: Date | null;
  lastError: string | null;
  createdAt: Date;
  publishedAt: Date | null;
}

/** Outbox rows of one tenant's projects in one state, newest first (for operators). */
export async function listOutboxRows(
  db: Db,
  params: { tenantId: string; state: OutboxState; limit: number },
): Promise<OutboxRowView[]> {
  const projects = await db.project.findMany({
    where: { tenantId: params.tenantId },
    select: { id: true, name: true },
  });
  const names = new Map(projects.map((p) => [p.id, p.name]));
  const rows = await db.outboxRow.findMany({
    where: { projectId: { in: [...names.keys()] }, state: params.state },
    orderBy: { id: "desc" },
    take: params.limit,
  });
  return rows.map((r) => ({
    eventId: r.eventId,
    projectId: r.projectId,
    projectName: names.get(r.projectId) ?? r.projectId,
    eventType: r.eventType,
    state: r.state,
    attempts: r.attempts,
    streamIndex: r.streamIndex,
    nextAttemptAt: r.nextAttemptAt,
    lastError: r.lastError,
    createdAt: r.createdAt,
    publishedAt: r.publishedAt,
  }));
}

/** Counts of a tenant's outbox rows by state. */
export async function countOutboxRows(db: Db, tenantId: string): Promise<Record<OutboxState, number>> {
  const rows = await db.$queryRaw<{ state: OutboxState; n: number }[]>`
    SELECT o.state, count(*)::int AS n FROM outbox o JOIN projects p ON p.id = o.project_id
    WHERE p.tenant_id = ${tenantId} GROUP BY o.state`;
  const out: Record<OutboxState, number> = { pending: 0, retry_wait: 0, published: 0, failed: 0 };
  for (const r of rows) out[r.state] = r.n;
  return out;
}
