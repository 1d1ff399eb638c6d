import { commandCapWindow, meterWindow, type RhumbatronConfig, streamIndex } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { SANDBOX_COUNTERS, sandboxBudgetOf, sandboxMeterScope } from "../sandbox/meter.ts";
import { CLASSIFIER_COUNTER } from "../work-graph/causal-router.ts";

export interface SubscriptionLag {
  subscription: string;
  committedOffset: number;
  lag: number;
  leasedUntil: Date | null;
  redeliverAt: Date | null;
  updatedAt: Date;
}

export interface StreamLag {
  streamIndex: number;
  headOffset: number;
  /** The largest lag of any subscription on this stream (0 when none has a cursor yet). */
  maxLag: number;
  subscriptions: SubscriptionLag[];
  /** The names of this tenant's projects whose Events go to this stream. */
  projects: string[];
}

/**
 * Consumer lag on every configured stream: the stream head's offset minus each subscription's
 * committed offset. Streams are shared by every tenant of the environment (config.streams.count,
 * 8), so the numbers are the environment's; `projects` names which of them carry this tenant's
 * Events.
 */
export async function streamLag(
  db: Db,
  tenantId: string,
  config: Pick<RhumbatronConfig, "streams">,
): Promise<StreamLag[]> {
  const count = config.streams.count;
  const [heads, cursors, projects] = await Promise.all([
    db.streamHead.findMany({ where: { streamIndex: { lt: count } } }),
    db.streamCursor.findMany({
      where: { streamIndex: { lt: count } },
      orderBy: [{ streamIndex: "asc" }, { subscription: "asc" }],
    }),
    db.project.findMany({ where: { tenantId }, select: { id: true, name: true }, orderBy: { name: "asc" } }),
  ]);
  return Array.from({ length: count }, (_, n) => {
    const headOffset = Number(heads.find((h) => h.streamIndex === n)?.lastOffset ?? 0n);
    const subscriptions = cursors
      .filter((c) => c.streamIndex === n)
      .map((c) => ({
        subscription: c.subscription,
        committedOffset: Number(c.committedOffset),
        lag: Math.max(headOffset - Number(c.committedOffset), 0),
        leasedUntil: c.leasedUntil,
        redeliverAt: c.redeliverAt,
        updatedAt: c.updatedAt,
      }));
    return {
      streamIndex: n,
      headOffset,
      maxLag: subscriptions.reduce((m, s) => Math.max(m, s.lag), 0),
      subscriptions,
      projects: projects.filter((p) => streamIndex(p.id, count) === n).map((p) => p.name),
    };
  });
}

export interface UsageMeters {
  sandbox: { env: string; window: string; usedSeconds: number; reservedSeconds: number; capSeconds: number };
  classifier: { env: string; day: string; calls: number; cap: number };
}

/**
 * The tenant's Sandbox meter for the current month against its budget (the tenant's own, else
 * RHUMBATRON_SANDBOX_MONTHLY_SECONDS, else 18,000 s; `sandbox.meter` has the details) and the
 * overlap classifier's calls today against its daily cap (config.causal.classifierDailyCallCap,
 * 200, environment-wide; docs/agents.md, The overlap classifier), read from usage_counters with the same
 * windows and scopes the writers use (meterWindow, commandCapWindow: UTC).
 */
export async function usageMeters(
  db: Db,
  tenantId: string,
  config: Pick<RhumbatronConfig, "env" | "sandbox" | "causal">,
  now: Date,
): Promise<UsageMeters> {
  const month = meterWindow(now);
  const day = commandCapWindow(now);
  const [rows, budget] = await Promise.all([
    db.usageCounter.findMany({
      where: {
        OR: [
          {
            scopeId: sandboxMeterScope(config.env, tenantId),
            counter: { in: [SANDBOX_COUNTERS.usedSeconds, SANDBOX_COUNTERS.reservedSeconds] },
            window: month,
          },
          { scopeId: config.env, counter: CLASSIFIER_COUNTER, window: day },
        ],
      },
    }),
    sandboxBudgetOf(db, tenantId, config),
  ]);
  const count = (counter: string) => rows.find((r) => r.counter === counter)?.count ?? 0;
  return {
    sandbox: {
      env: config.env,
      window: month,
      usedSeconds: count(SANDBOX_COUNTERS.usedSeconds),
      reservedSeconds: count(SANDBOX_COUNTERS.reservedSeconds),
      capSeconds: budget.seconds,
    },
    classifier: { env: config.env, day, calls: count(CLASSIFIER_COUNTER), cap: config.causal.classifierDailyCallCap },
  };
}
