import { buildEvent, type EventEnvelope, type EventPayload, type EventType, stableEventId } from "@rhumbatron/core";
import type { Db } from "../client.ts";

/** Test fixtures for event tests: a tenant, projects and changes, and envelopes for them. */
export async function seedProjects(db: Db, projectIds: string[], tenantId = "ten_test"): Promise<void> {
  await db.tenant.upsert({
    where: { id: tenantId },
    create: { id: tenantId, slug: tenantId, name: tenantId },
    update: {},
  });
  for (const id of projectIds) {
    await db.project.upsert({ where: { id }, create: { id, tenantId, name: id, status: "active" }, update: {} });
  }
}

export async function seedChange(db: Db, projectId: string, changeId: string): Promise<void> {
  await db.change.upsert({
    where: { id: changeId },
    create: { id: changeId, projectId, title: changeId, riskTier: "low", clientRequestId: changeId },
    update: {},
  });
}

export function testEvent<T extends EventType>(
  eventType: T,
  o: {
    projectId: string;
    changeId?: string;
    taskId?: string;
    key?: string;
    tenantId?: string;
    payload: EventPayload<T>;
    at?: Date;
  },
): EventEnvelope<T> {
  const changeId = o.changeId ?? `chg_${o.projectId}`;
  return buildEvent({
    eventId: stableEventId(changeId, eventType, o.taskId ?? null, o.key ?? null),
    eventType,
    tenantId: o.tenantId ?? "ten_test",
    projectId: o.projectId,
    changeId,
    taskId: o.taskId ?? null,
    actor: { kind: "system", id: "test" },
    resource: `change:${changeId}`,
    canonicalGeneration: 0,
    causedBy: null,
    correlationId: changeId,
    timestamp: o.at ?? new Date("2026-01-01T00:00:00Z"),
    payload: o.payload,
  });
}

/**
 * Waits until `probe` holds, polling; fails after `limitMs` (one generous outer limit: a busy
 * machine only makes the wait longer). Never a fixed sleep: tests wait for conditions.
 */
export async function waitFor(what: string, probe: () => Promise<boolean> | boolean, limitMs = 60_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`waited ${limitMs} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Until another backend of this database waits for a row lock. */
export function waitForLockWaiter(db: Db): Promise<void> {
  return waitFor("a transaction waiting for a row lock", async () => {
    const [row] = await db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    return (row?.n ?? 0) > 0;
  });
}

/**
 * Takes a stream's next offset behind its head's back, as another writer would, so the next append
 * to that stream fails on the unique offset. `free()` moves the head past it, and appends work again.
 */
export async function blockStreamOffset(db: Db, stream: number): Promise<{ free: () => Promise<void> }> {
  const head = await db.streamHead.findUnique({ where: { streamIndex: stream } });
  const next = (head?.lastOffset ?? 0n) + 1n;
  await db.streamEntry.create({
    data: {
      streamIndex: stream,
      offset: next,
      eventId: `evt_in_the_way_${stream}_${next}`,
      projectId: "proj_other",
      eventType: "task.failed",
      envelope: {},
      publishedAt: new Date(),
    },
  });
  return {
    free: async () => {
      await db.streamHead.upsert({
        where: { streamIndex: stream },
        create: { streamIndex: stream, lastOffset: next },
        update: { lastOffset: next },
      });
    },
  };
}
