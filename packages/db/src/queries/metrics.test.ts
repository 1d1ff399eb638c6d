import { type EventPayload, type EventType, loadConfig, rangeWindow } from "@rhumbatron/core";
import { beforeAll, describe, expect, it } from "vitest";
import { testEvent, useTestDatabase } from "../testing/index.ts";
import { checkMetrics, landingMetrics, sandboxSeconds } from "./metrics.ts";

/**
 * The landing-queue owner's metrics against seeded rows, with the clock stopped at NOW: every
 * window is computed from it, and the landing queue's depth is never counted past it.
 */
const t = useTestDatabase();
const config = loadConfig("dev");
const ACME = "ten_acme";
const OTHER = "ten_other";
const SHOP = "proj_metrics_shop";
const BLOG = "proj_metrics_blog";
const QUEUE = "proj_metrics_queue";
const SECRET = "proj_metrics_secret";
const NOW = new Date("2026-03-10T14:25:00Z");
const at = (iso: string) => new Date(`2026-${iso}Z`);
const week = { ...rangeWindow(NOW, "7d", "day"), bucket: "day" as const };
const day = { ...rangeWindow(NOW, "24h", "hour"), bucket: "hour" as const };

const generations = new Map<string, number>();
let seq = 0;

async function change(
  projectId: string,
  id: string,
  o: { createdAt: string; landingSince?: string; tree?: string; landedAt?: string },
) {
  await t.db.change.create({
    data: {
      id,
      projectId,
      title: id,
      riskTier: "low",
      clientRequestId: id,
      createdAt: at(o.createdAt),
      landWhenReady: o.landingSince !== undefined,
      landingSince: o.landingSince ? at(o.landingSince) : null,
    },
  });
  await t.db.candidate.create({
    data: {
      id: `cand_${id}`,
      projectId,
      changeId: id,
      compositionKey: `k_${id}`,
      baseGeneration: 0,
      baseCommit: "c0",
      composedTree: o.tree ?? `tree_${id}`,
      status: o.landedAt ? "promoted" : "verified",
    },
  });
  if (o.landedAt) {
    const generation = (generations.get(projectId) ?? 0) + 1;
    generations.set(projectId, generation);
    await t.db.canonicalGeneration.create({
      data: {
        projectId,
        generation,
        commit: `c_${id}`,
        tree: `t_${id}`,
        candidateId: `cand_${id}`,
        createdAt: at(o.landedAt),
      },
    });
  }
}

/** An Event as its transaction leaves it in the outbox (the record the landing history reads). */
async function outboxEvent<T extends EventType>(
  tenantId: string,
  projectId: string,
  changeId: string,
  eventType: T,
  when: string,
  payload: EventPayload<T>,
) {
  const envelope = testEvent(eventType, { projectId, tenantId, changeId, key: `${when}`, at: at(when), payload });
  await t.db.outboxRow.create({
    data: {
      eventId: envelope.eventId,
      projectId,
      projectSeq: BigInt(++seq),
      streamIndex: 0,
      eventType,
      envelope: JSON.parse(JSON.stringify(envelope)),
      state: "published",
    },
  });
}

/**
 * A Change that waited in the landing queue before it landed. The times go in the order they
 * happened (created, joined the queue, landed), so each seeded Change reads as a timeline.
 */
function queuedThenLanded(
  projectId: string,
  id: string,
  createdAt: string,
  landingSince: string,
  landedAt: string,
  tree?: string,
) {
  return change(projectId, id, { createdAt, landingSince, landedAt, tree });
}

/** A person turning "land when ready" on or off for a Change in QUEUE: a step of the landing queue's depth. */
function landingTurned(changeId: string, when: string, landWhenReady: boolean) {
  return outboxEvent(ACME, QUEUE, changeId, "change.landing_changed", when, { landWhenReady, actorId: "u" });
}

let evidence = 0;
async function run(candidate: string, checkId: string, status: string, durationMs: number, completedAt: string) {
  await t.db.evidence.create({
    data: {
      id: `evd_${++evidence}`,
      candidateId: `cand_${candidate}`,
      checkId,
      kind: "command",
      status,
      coverage: status === "skipped" ? "not_checked" : "checked_supported",
      durationMs,
      timeoutSeconds: 600,
      completedAt: at(completedAt),
    },
  });
}

/** A person's request to run a check of a Candidate again: what the rerun count of a check counts. */
async function rerun(id: string, candidate: string, checkId: string, requestedAt: string) {
  await t.db.checkRerun.create({
    data: { id, candidateId: `cand_${candidate}`, checkId, n: 1, requestedBy: "u", requestedAt: at(requestedAt) },
  });
}

async function charge(
  id: string,
  tenantId: string,
  o: { kind: "agent" | "candidate"; reservedAt: string; seconds: number; settled?: boolean; env?: string },
) {
  await t.db.sandboxCharge.create({
    data: {
      reservationId: id,
      tenantId,
      env: o.env ?? config.env,
      window: o.reservedAt.slice(0, 5),
      kind: o.kind,
      reservedSeconds: 300,
      billing: o.settled === false ? null : "measured",
      wallSeconds: o.settled === false ? null : o.seconds,
      chargedSeconds: o.settled === false ? null : o.seconds,
      reservedAt: at(o.reservedAt),
      settledAt: o.settled === false ? null : at(o.reservedAt),
    },
  });
}

beforeAll(async () => {
  await t.db.tenant.createMany({
    data: [
      { id: ACME, slug: "acme", name: "Acme" },
      { id: OTHER, slug: "other", name: "Other" },
    ],
  });
  await t.db.project.createMany({
    data: [
      { id: SHOP, tenantId: ACME, name: "shop", status: "active" },
      { id: BLOG, tenantId: ACME, name: "blog", status: "active" },
      { id: QUEUE, tenantId: ACME, name: "queue", status: "active" },
      { id: SECRET, tenantId: OTHER, name: "secret", status: "active" },
    ],
  });
  for (const projectId of [SHOP, BLOG, QUEUE, SECRET]) {
    await t.db.canonicalGeneration.create({
      data: { projectId, generation: 0, commit: "c0", tree: "t0", createdAt: at("02-01T00:00:00") },
    });
  }
  // Landed: request -> landed 600 s, 1,200 s (Mar 9), 1,800 s, 3,600 s, 36,000 s (Mar 10); l1, l3 from the queue.
  await change(SHOP, "old", { createdAt: "02-20T00:00:00", landedAt: "03-01T01:00:00" });
  await queuedThenLanded(SHOP, "l1", "03-09T10:00:00", "03-09T10:05:00", "03-09T10:10:00", "t1");
  await change(SHOP, "l2", { createdAt: "03-09T11:00:00", landedAt: "03-09T11:20:00" });
  await queuedThenLanded(SHOP, "l3", "03-10T09:00:00", "03-10T09:15:00", "03-10T09:30:00");
  await change(SHOP, "l4", { createdAt: "03-10T10:00:00", landedAt: "03-10T11:00:00" });
  await change(BLOG, "l5", { createdAt: "03-09T20:00:00", landedAt: "03-10T06:00:00" });
  await change(SHOP, "r", { createdAt: "03-09T11:30:00", tree: "t1" }); // recomposed to l1's tree
  await queuedThenLanded(SECRET, "x", "03-10T00:00:00", "03-10T00:00:00", "03-10T00:00:05");
  await change(SECRET, "x2", { createdAt: "03-10T10:00:00", landingSince: "03-10T10:00:00" });

  // The landing queue of QUEUE over the last 24 h.
  await queuedThenLanded(QUEUE, "q1", "03-09T12:00:00", "03-09T12:00:00", "03-10T09:00:00");
  await change(QUEUE, "q2", { createdAt: "03-10T08:00:00" });
  await landingTurned("q2", "03-10T10:00:00", true);
  await landingTurned("q2", "03-10T11:00:00", false);
  await change(QUEUE, "q3", { createdAt: "03-10T07:00:00", landingSince: "03-10T12:00:00" }); // created landing
  await landingTurned("q3", "03-10T08:00:00", false);
  await landingTurned("q3", "03-10T12:00:00", true);
  await change(QUEUE, "q4", { createdAt: "03-10T09:30:00" });
  await landingTurned("q4", "03-10T09:45:00", true);
  await outboxEvent(ACME, QUEUE, "q4", "change.cancelled", "03-10T13:00:00", {
    reason: "not needed",
    candidateIds: [],
    actorId: "u",
  });

  // Checks. unit: 1,000…5,000 ms; flaky on t1 (fail, rerun passed); failed for good on l3's tree.
  await run("l1", "unit", "fail", 4000, "03-09T10:01:00");
  await run("l1", "unit", "pass", 3000, "03-09T10:03:00");
  await run("l2", "unit", "pass", 2000, "03-09T11:05:00");
  await run("l3", "unit", "fail", 5000, "03-10T09:10:00");
  await run("l4", "unit", "pass", 1000, "03-10T10:30:00");
  await run("l4", "lint", "skipped", 0, "03-10T10:30:00");
  // e2e: errored on l1, passed on r (the same tree): flaky; passed then failed on l3: not flaky.
  await run("l1", "e2e", "error", 60_000, "03-09T10:02:00");
  await run("r", "e2e", "pass", 50_000, "03-09T12:00:00");
  await run("l2", "e2e", "pass", 40_000, "03-09T11:06:00");
  await run("l3", "e2e", "pass", 45_000, "03-10T09:11:00");
  await run("l3", "e2e", "fail", 55_000, "03-10T09:12:00");
  // Before the window: neither its durations nor its trees count.
  await run("old", "unit", "fail", 90_000, "02-28T00:30:00");
  await run("old", "unit", "pass", 90_000, "02-28T00:40:00");
  await rerun("rr1", "l1", "unit", "03-09T10:02:00");
  await run("x", "unit", "fail", 2000, "03-10T00:00:01");
  await run("x", "unit", "pass", 9_000_000, "03-10T00:00:02");
  await rerun("rr2", "x", "unit", "03-10T00:00:01");

  // Sandbox seconds.
  await charge("res_a1", ACME, { kind: "agent", reservedAt: "03-09T10:00:00", seconds: 120 });
  await charge("res_a2", ACME, { kind: "agent", reservedAt: "03-09T11:00:00", seconds: 60 });
  await charge("res_c1", ACME, { kind: "candidate", reservedAt: "03-10T09:00:00", seconds: 300 });
  await charge("res_open", ACME, { kind: "agent", reservedAt: "03-10T09:00:00", seconds: 0, settled: false });
  await charge("res_old", ACME, { kind: "agent", reservedAt: "03-01T09:00:00", seconds: 77 });
  await charge("res_prod", ACME, { kind: "agent", reservedAt: "03-10T09:00:00", seconds: 55, env: "prod" });
  await charge("res_x", OTHER, { kind: "agent", reservedAt: "03-10T09:00:00", seconds: 999 });
});

describe("landingMetrics", () => {
  it("gives request-to-landed and queue-to-landed p50 and p90 (nearest rank) over the window, and per day", async () => {
    const m = await landingMetrics(t.db, { tenantId: ACME, ...week, now: NOW });
    // 600, 1,200, 1,800, 3,600, 36,000 and q1's 75,600 s; the other tenant's 5 s and February's are not here.
    expect(m.requestToLanded).toEqual({ landed: 6, p50Seconds: 1800, p90Seconds: 75_600 });
    // l1 300 s, l3 900 s and q1 75,600 s in the queue.
    expect(m.queueToLanded).toEqual({ landed: 3, p50Seconds: 900, p90Seconds: 75_600 });
    expect(m.buckets).toEqual([
      { bucket: at("03-09T00:00:00"), landed: 2, p50Seconds: 600, p90Seconds: 1200 },
      { bucket: at("03-10T00:00:00"), landed: 4, p50Seconds: 3600, p90Seconds: 75_600 },
    ]);
    const blog = await landingMetrics(t.db, { tenantId: ACME, ...week, now: NOW, projectId: BLOG });
    expect(blog.requestToLanded).toEqual({ landed: 1, p50Seconds: 36_000, p90Seconds: 36_000 });
  });

  it("steps the landing queue's depth at each join, leave, landing and cancellation, up to now", async () => {
    const m = await landingMetrics(t.db, { tenantId: ACME, ...day, now: NOW, projectId: QUEUE });
    const step = (iso: string, depth: number) => ({ t: at(iso).getTime(), depth });
    expect(m.depth.steps).toEqual([
      step("03-09T15:00:00", 1), // q1, created landing
      step("03-10T07:00:00", 2), // q3, created landing
      step("03-10T08:00:00", 1), // q3 turned off
      step("03-10T09:00:00", 0), // q1 landed
      step("03-10T09:45:00", 1), // q4 turned on
      step("03-10T10:00:00", 2), // q2 turned on
      step("03-10T11:00:00", 1), // q2 turned off
      step("03-10T12:00:00", 2), // q3 turned on again
      step("03-10T13:00:00", 1), // q4 cancelled
      step("03-10T14:25:00", 1), // now
    ]);
    expect(m.depth).toMatchObject({ current: 1, peak: 2 });
    // An hour earlier, the same rows say less: nothing after the clock is counted.
    const earlier = await landingMetrics(t.db, {
      tenantId: ACME,
      ...day,
      now: at("03-10T10:30:00"),
      projectId: QUEUE,
    });
    expect(earlier.depth.steps.at(-1)).toEqual(step("03-10T10:30:00", 2));
  });

  it("never counts another tenant's Changes, and shows that tenant only its own", async () => {
    const acme = await landingMetrics(t.db, { tenantId: ACME, ...day, now: NOW });
    // Acme's queue now: q3 only (x2 of the other tenant waits too, but not here).
    expect(acme.depth.current).toBe(1);
    const other = await landingMetrics(t.db, { tenantId: OTHER, ...week, now: NOW });
    expect(other.requestToLanded).toEqual({ landed: 1, p50Seconds: 5, p90Seconds: 5 });
    expect(other.depth.current).toBe(1);
  });
});

describe("checkMetrics", () => {
  it("gives each check's run count, p50, p90 and longest duration, skipped runs and older runs left out", async () => {
    const checks = await checkMetrics(t.db, { tenantId: ACME, ...week });
    expect(checks.map((c) => c.checkId)).toEqual(["e2e", "unit"]);
    expect(checks.find((c) => c.checkId === "unit")).toMatchObject({ runs: 5, p50Ms: 3000, p90Ms: 5000, maxMs: 5000 });
    expect(checks.find((c) => c.checkId === "e2e")).toMatchObject({
      runs: 5,
      p50Ms: 50_000,
      p90Ms: 60_000,
      maxMs: 60_000,
    });
  });

  it("counts a tree as flaky when a failure or error on it was followed by a pass, on the same Candidate or tree", async () => {
    const checks = await checkMetrics(t.db, { tenantId: ACME, ...week });
    expect(checks.find((c) => c.checkId === "unit")).toMatchObject({
      trees: 4,
      failedTrees: 2,
      flakyTrees: 1,
      flakeRate: 0.25,
      reruns: 1,
    });
    expect(checks.find((c) => c.checkId === "e2e")).toMatchObject({
      trees: 3,
      failedTrees: 2,
      flakyTrees: 1,
      reruns: 0,
    });
    expect(checks.find((c) => c.checkId === "e2e")?.flakeRate).toBeCloseTo(1 / 3);
  });

  it("shows each tenant only its own checks", async () => {
    const other = await checkMetrics(t.db, { tenantId: OTHER, ...week });
    expect(other).toEqual([
      {
        checkId: "unit",
        runs: 2,
        p50Ms: 2000,
        p90Ms: 9_000_000,
        maxMs: 9_000_000,
        trees: 1,
        failedTrees: 1,
        flakyTrees: 1,
        flakeRate: 1,
        reruns: 1,
      },
    ]);
  });
});

describe("sandboxSeconds", () => {
  it("sums settled charges of this environment per bucket and kind, by when the workspace was reserved", async () => {
    const s = await sandboxSeconds(t.db, { tenantId: ACME, ...week, env: config.env });
    expect(s.points).toEqual([
      { bucket: at("03-09T00:00:00"), kind: "agent", seconds: 180, runs: 2 },
      { bucket: at("03-10T00:00:00"), kind: "candidate", seconds: 300, runs: 1 },
    ]);
    expect(s.totals).toEqual([
      { kind: "agent", seconds: 180, runs: 2 },
      { kind: "candidate", seconds: 300, runs: 1 },
    ]);
    const other = await sandboxSeconds(t.db, { tenantId: OTHER, ...week, env: config.env });
    expect(other.totals).toEqual([{ kind: "agent", seconds: 999, runs: 1 }]);
  });
});
