import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { candidateFork } from "@rhumbatron/core";
import { createDb, type Db } from "@rhumbatron/db";
import { createTestDatabase, dropDatabase, seedProjects, startTestServer } from "@rhumbatron/db/testing";
import fc from "fast-check";
import { GitOracle } from "./git-oracle.testing.ts";
import { promotionCommands } from "./promotion-commands.testing.ts";
import type { RunState, RunStats } from "./promotion-invariants.testing.ts";
import { initialModel } from "./promotion-model.testing.ts";
import { dropRepositories, type ModelWorld, modelWorld, projectsAhead, TENANT } from "./promotion-world.testing.ts";

/**
 * Test support only: the model check of the promotion protocol (docs/model-check.md) as one
 * function, for the test (promotion.model.test.ts) and for `npm run model-check`. The runs are
 * shared among `lanes`, each its own fast-check property with seed `seed + lane`, run side by
 * side; every run starts on a new project.
 */
export interface ModelCheckOptions {
  db: Db;
  runs: number;
  seed: number;
  /** Properties run side by side (each its own world and seed); default 1. */
  lanes?: number;
  /** The most commands a run is generated with (default 10; those that do not apply are skipped). */
  maxCommands?: number;
  /** Composing a cancelled Change too, as a late candidate.create does (docs/model-check.md, What it found); default on. */
  lateCompose?: boolean;
  /**
   * Replays one failure as fast-check reported it: its `path` and the counterexample's `replayPath`,
   * with `seed` the seed it names (one lane).
   */
  path?: string;
  replayPath?: string;
}

export interface ModelCheckResult {
  runs: number;
  commands: number;
  failures: number;
  seed: number;
  lanes: number;
  durationMs: number;
  /** How often each command answered what (`promote: promoted`, `compose: new Candidate, conflict`). */
  outcomes: Record<string, number>;
  /** Where the time went: each command kind's, the invariants' and the runs' setup, summed over the lanes. */
  ms: Record<string, number>;
  /** fast-check's report of each failing lane: its seed, path and shrunk command sequence. */
  reports: string[];
}

export async function runModelCheck(o: ModelCheckOptions): Promise<ModelCheckResult> {
  const started = Date.now();
  const lanes = o.path ? 1 : Math.max(1, Math.min(o.lanes ?? 1, o.runs));
  const stats: RunStats = { commands: 0, outcomes: {}, ms: {} };
  // The tenant first: the lanes' projects would otherwise race to make it.
  await seedProjects(o.db, [], TENANT);
  const details = await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      const world = await modelWorld(o.db);
      const projects = projectsAhead(world);
      try {
        const numRuns = Math.floor(o.runs / lanes) + (lane < o.runs % lanes ? 1 : 0);
        const replay = o.path ? { path: o.path, endOnFailure: true } : {};
        return await fc.check(property(world, projects, stats, o), { numRuns, seed: o.seed + lane, ...replay });
      } finally {
        await projects.done();
        await rm(world.root, { recursive: true, force: true });
      }
    }),
  );
  const failed = details.filter((d) => d.failed);
  return {
    runs: details.reduce((n, d) => n + d.numRuns, 0),
    commands: stats.commands,
    failures: failed.length,
    seed: o.seed,
    lanes,
    durationMs: Date.now() - started,
    outcomes: Object.fromEntries(Object.entries(stats.outcomes).sort()),
    ms: stats.ms,
    reports: failed.map((d) => `${fc.defaultReportMessage(d) ?? "failed"}\n${errorOf(d.errorInstance)}`),
  };
}

/** The error's message (a failed run's says the run as it went) and where it was thrown. */
const errorOf = (e: unknown) =>
  e instanceof Error
    ? [
        e.message,
        ...(e.stack ?? "")
          .split("\n")
          .filter((l) => l.trimStart().startsWith("at "))
          .slice(0, 6),
      ].join("\n")
    : String(e);

function property(
  world: ModelWorld,
  projects: ReturnType<typeof projectsAhead>,
  stats: RunStats,
  o: ModelCheckOptions,
) {
  const commands = promotionCommands({
    maxCommands: o.maxCommands ?? 10,
    late: o.lateCompose ?? true,
    ...(o.replayPath ? { replayPath: o.replayPath } : {}),
  });
  const limit = world.config.integration.recompositionsPerChangePerHour;
  return fc.asyncProperty(commands, async (cmds) => {
    const t0 = Date.now();
    const projectId = await projects.take();
    const r: RunState = {
      world,
      projectId,
      git: new GitOracle(world.store.gitdir(projectId)),
      changes: [],
      candidates: [],
      generation: 0,
      closed: new Set(),
      trace: [],
      stats,
    };
    stats.ms.setup = (stats.ms.setup ?? 0) + Date.now() - t0;
    try {
      await fc.asyncModelRun(() => ({ model: initialModel(limit), real: r }), cmds);
    } finally {
      r.git.close();
      await dropRepositories(world, [r.projectId, ...r.candidates.map(candidateFork)]);
    }
  });
}

/**
 * A database of its own on the tests' Postgres server: DATABASE_URL's, or an embedded one started
 * here (packages/db/src/testing/server.ts), with the migrated template copied; dropped by `close`.
 */
export async function modelCheckDatabase(): Promise<{ db: Db; close: () => Promise<void> }> {
  const server = await startTestServer();
  const name = `rhumbatron_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  const db = createDb(await createTestDatabase(server.adminUrl, server.template, name), { maxConnections: 10 });
  return {
    db,
    close: async () => {
      await db.$disconnect();
      await dropDatabase(server.adminUrl, name);
      await server.stop();
    },
  };
}
