import {
  type FailingTest,
  type HealthRules,
  nextTestHealth,
  type Quarantine,
  type RhumbatronConfig,
  type TestHealth,
  type TestHealthState,
  testKey,
  treeOutcome,
} from "@rhumbatron/core";
import { appendToOutbox, type StateDeps } from "@rhumbatron/runtime";
import { changeEvent } from "../events/factory.ts";
import type { LockedChange } from "../events/owners.ts";
import type { TxContext } from "../transaction.ts";
import { activeProjectPolicy } from "./project-policy.ts";

/**
 * Each test's history (docs/flaky-tests.md), written with the Evidence that reports it, in the
 * same transaction: one test_results row per test per record, and the test's health in
 * test_statuses moved on by core's nextTestHealth. A change of health, or of a quarantine the
 * policy's rule made, is a `test.status_changed` Event. One project's records are written one at a
 * time (an advisory lock), so two Candidates' results never lose each other's counts.
 */

/** A test as a check's record keeps it (apps/worker/src/verification/reports.ts, with its attempts). */
export interface RecordedTest {
  id: string;
  name: string;
  suite?: string[];
  file?: string | null;
  status: "passed" | "failed" | "skipped";
  attempts?: number;
  failedAttempts?: number;
}

/** The Candidates a test held up that its row keeps (the newest). */
const DELAYED_KEPT = 20;

export interface TestHistoryDeps extends StateDeps {
  config: RhumbatronConfig;
}

export async function recordTestHistory(
  ctx: TxContext,
  owner: LockedChange,
  e: { id: string; checkId: string; candidateId: string; tests: readonly RecordedTest[] },
  deps: TestHistoryDeps,
): Promise<void> {
  const candidate = await ctx.tx.candidate.findUnique({
    where: { id: e.candidateId },
    select: { projectId: true, composedTree: true, composedCommit: true },
  });
  if (!candidate || e.tests.length === 0) return;
  const { projectId } = candidate;
  const now = deps.now();
  await ctx.tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`tests:${projectId}`}))`;
  const rows = e.tests.map((t) => {
    const attempts = t.attempts ?? 1;
    const failedAttempts = t.failedAttempts ?? (t.status === "failed" ? 1 : 0);
    return { t, attempts, failedAttempts, outcome: treeOutcome(attempts, failedAttempts, t.status !== "skipped") };
  });
  const inserted = await ctx.tx.testResult.createMany({
    data: rows.map((r) => ({
      evidenceId: e.id,
      testId: r.t.id,
      projectId,
      checkId: e.checkId,
      candidateId: e.candidateId,
      tree: candidate.composedTree ?? candidate.composedCommit ?? "",
      outcome: r.outcome,
      attempts: r.attempts,
      failedAttempts: r.failedAttempts,
      recordedAt: now,
    })),
    skipDuplicates: true,
  });
  // A replay of the same record moved nothing on the first time round: it moves nothing now.
  if (inserted.count === 0) return;
  const rules = await healthRules(ctx, projectId, deps.config);
  const before = await statesOf(
    ctx,
    projectId,
    e.checkId,
    rows.map((r) => r.t.id),
  );
  const changed: { r: (typeof rows)[number]; step: ReturnType<typeof nextTestHealth> }[] = [];
  const next = rows
    .filter((r) => r.outcome !== "skipped")
    .map((r) => {
      const step = nextTestHealth(before.get(r.t.id) ?? null, r.outcome, now, rules);
      if (step.statusFrom || step.quarantine) changed.push({ r, step });
      return { r, state: step.state };
    });
  await upsertStates(ctx, projectId, e.checkId, next, now);
  const delayed = rows.filter((r) => r.outcome === "flaky" && !before.get(r.t.id)?.quarantine).map((r) => r.t.id);
  if (delayed.length) await markDelayed(ctx, projectId, e.checkId, delayed, e.candidateId);
  if (changed.length === 0) return;
  await appendToOutbox(
    ctx,
    changed.map(({ r, step }) =>
      changeEvent(owner, "test.status_changed", {
        key: `${e.id}:${r.t.id}`,
        actor: { kind: "system", id: "test-history" },
        payload: {
          checkId: e.checkId,
          testId: r.t.id,
          name: displayName(r.t),
          status: step.state.status,
          previous: step.statusFrom ?? step.state.status,
          runs: step.state.runs,
          flakyRuns: step.state.flakyRuns,
          quarantined: step.state.quarantine !== null,
          quarantine: step.quarantine,
          candidateId: e.candidateId,
        },
        now,
      }),
    ),
    deps,
  );
}

/** "parser > reads numbers": the suite path and the name. */
export const displayName = (t: Pick<RecordedTest, "name" | "suite">) => [...(t.suite ?? []), t.name].join(" > ");

async function healthRules(ctx: TxContext, projectId: string, config: RhumbatronConfig): Promise<HealthRules> {
  const policy = await activeProjectPolicy(ctx.tx, projectId, config);
  return {
    brokenAfter: config.tests.brokenAfter,
    healthyAfterPasses: config.tests.healthyAfterPasses,
    autoQuarantine: policy.document.autoQuarantine ?? null,
  };
}

type StatusRow = Awaited<ReturnType<TxContext["tx"]["testStatus"]["findMany"]>>[number];

/** A row's quarantine, or null. */
export function quarantineOf(row: StatusRow): Quarantine | null {
  if (!row.quarantinedAt || !row.quarantineExpiresAt) return null;
  return {
    at: row.quarantinedAt,
    owner: row.quarantineOwner ?? "",
    reason: row.quarantineReason ?? "",
    expiresAt: row.quarantineExpiresAt,
    auto: row.quarantineAuto,
  };
}

async function statesOf(
  ctx: TxContext,
  projectId: string,
  checkId: string,
  testIds: string[],
): Promise<Map<string, TestHealthState>> {
  const found = await ctx.tx.testStatus.findMany({ where: { projectId, checkId, testId: { in: testIds } } });
  return new Map(
    found.map((row) => [
      row.testId,
      {
        status: row.status as TestHealth,
        statusSince: row.statusSince,
        runs: row.runs,
        flakyRuns: row.flakyRuns,
        failedRuns: row.failedRuns,
        consecutivePasses: row.consecutivePasses,
        consecutiveFailures: row.consecutiveFailures,
        quarantine: quarantineOf(row),
      },
    ]),
  );
}

/** Every test's new state in one statement (a suite's thousands of tests are one round trip). */
async function upsertStates(
  ctx: TxContext,
  projectId: string,
  checkId: string,
  next: { r: { t: RecordedTest }; state: TestHealthState }[],
  now: Date,
): Promise<void> {
  if (next.length === 0) return;
  const col = <T>(f: (n: (typeof next)[number]) => T) => next.map(f);
  const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
  await ctx.tx.$executeRaw`
    INSERT INTO test_statuses (project_id, check_id, test_id, name, file, status, status_since, runs, flaky_runs,
      failed_runs, consecutive_passes, consecutive_failures, last_run_at, quarantined_at, quarantine_owner,
      quarantine_reason, quarantine_expires_at, quarantine_auto)
    SELECT ${projectId}, ${checkId}, u.test_id, u.name, u.file, u.status, u.status_since::timestamp(3), u.runs,
      u.flaky_runs, u.failed_runs, u.consecutive_passes, u.consecutive_failures, ${now}::timestamp(3),
      u.q_at::timestamp(3), u.q_owner, u.q_reason, u.q_expires::timestamp(3), u.q_auto
    FROM unnest(${col((n) => n.r.t.id)}::text[], ${col((n) => displayName(n.r.t))}::text[],
      ${col((n) => n.r.t.file ?? null)}::text[], ${col((n) => n.state.status)}::text[],
      ${col((n) => iso(n.state.statusSince))}::text[], ${col((n) => n.state.runs)}::int[],
      ${col((n) => n.state.flakyRuns)}::int[], ${col((n) => n.state.failedRuns)}::int[],
      ${col((n) => n.state.consecutivePasses)}::int[], ${col((n) => n.state.consecutiveFailures)}::int[],
      ${col((n) => iso(n.state.quarantine?.at))}::text[], ${col((n) => n.state.quarantine?.owner ?? null)}::text[],
      ${col((n) => n.state.quarantine?.reason ?? null)}::text[],
      ${col((n) => iso(n.state.quarantine?.expiresAt))}::text[], ${col((n) => n.state.quarantine?.auto ?? false)}::bool[])
      AS u(test_id, name, file, status, status_since, runs, flaky_runs, failed_runs, consecutive_passes,
        consecutive_failures, q_at, q_owner, q_reason, q_expires, q_auto)
    ON CONFLICT (project_id, check_id, test_id) DO UPDATE SET
      name = EXCLUDED.name, file = EXCLUDED.file, status = EXCLUDED.status, status_since = EXCLUDED.status_since,
      runs = EXCLUDED.runs, flaky_runs = EXCLUDED.flaky_runs, failed_runs = EXCLUDED.failed_runs,
      consecutive_passes = EXCLUDED.consecutive_passes, consecutive_failures = EXCLUDED.consecutive_failures,
      last_run_at = EXCLUDED.last_run_at, quarantined_at = EXCLUDED.quarantined_at,
      quarantine_owner = EXCLUDED.quarantine_owner, quarantine_reason = EXCLUDED.quarantine_reason,
      quarantine_expires_at = EXCLUDED.quarantine_expires_at, quarantine_auto = EXCLUDED.quarantine_auto`;
}

/** The Candidate joins the newest ones each flaky test held up. */
async function markDelayed(
  ctx: TxContext,
  projectId: string,
  checkId: string,
  testIds: string[],
  candidateId: string,
): Promise<void> {
  await ctx.tx.$executeRaw`
    UPDATE test_statuses
    SET delayed = (array_remove(delayed, ${candidateId}) || ARRAY[${candidateId}]::text[])[greatest(1, cardinality(array_remove(delayed, ${candidateId})) + 2 - ${DELAYED_KEPT}):],
        delayed_count = delayed_count + 1
    WHERE project_id = ${projectId} AND check_id = ${checkId} AND test_id = ANY(${testIds}::text[])`;
}

/** Of these tests, the IDs the project has run before in this check, and whether it ran the check's tests at all. */
export async function knownTests(
  db: { testStatus: TxContext["tx"]["testStatus"] },
  projectId: string,
  checkId: string,
  testIds: readonly string[],
): Promise<{ known: Set<string>; hasHistory: boolean }> {
  const [found, any] = await Promise.all([
    db.testStatus.findMany({
      where: { projectId, checkId, testId: { in: [...testIds] } },
      select: { testId: true },
    }),
    db.testStatus.findFirst({ where: { projectId, checkId }, select: { testId: true } }),
  ]);
  return { known: new Set(found.map((f) => f.testId)), hasHistory: any !== null };
}

/** The keys (core testKey) of the project's tests whose quarantine holds at `now`. */
export async function quarantinedTests(
  db: { testStatus: TxContext["tx"]["testStatus"] },
  projectId: string,
  now: Date,
): Promise<Set<string>> {
  const rows = await db.testStatus.findMany({
    where: { projectId, quarantinedAt: { not: null }, quarantineExpiresAt: { gt: now } },
    select: { checkId: true, testId: true },
  });
  return new Set(rows.map((r) => testKey(r.checkId, r.testId)));
}

/** The tests of a record that failed on some attempt, as the gate reads them; null: no report. */
export function failingTestsOf(tests: unknown): FailingTest[] | null {
  if (!Array.isArray(tests)) return null;
  return (tests as (RecordedTest & { isNew?: boolean })[])
    .filter((t) => t.status === "failed")
    .map((t) => ({
      id: t.id,
      name: displayName(t),
      attempts: t.attempts ?? 1,
      failedAttempts: t.failedAttempts ?? 1,
      ...(t.isNew ? { isNew: true } : {}),
    }));
}
