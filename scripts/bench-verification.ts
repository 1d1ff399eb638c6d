/**
 * `npm run bench -- verification`: one template Change (a project provisioned from the template,
 * the template's real checks, a scripted Agent) on the whole worker (real Postgres, git
 * repositories and Sandbox), from create to verified. BENCH_RISK picks the risk tier (default
 * high: build, targeted, contract, security and, as the Change touches the page, browser).
 * Prints JSON lines, every figure read from the recorded rows (Change, Agent runs, Candidate,
 * workflow steps, Evidence), none guessed:
 *   create_to_verified_ms   the Change's creation -> its Candidate's `finish` step (verified)
 *   phase                   agent (create -> Candidate), start (Candidate -> workflow instance),
 *                           compose (instance -> merge), plan (-> composed), prepare (the tree's
 *                           shared preparation, when recorded), each check (its Evidence's
 *                           duration, start and end), gate (last Evidence -> finish)
 *   checks                  the checks' wall time, the sum of their durations and its ratio
 * Baseline, same run: the same check commands run one after another directly on a copy of the
 * template (no worker, no Sandbox), `raw_sequential_commands_ms`; and a second Change, so the
 * warm figures (browser already launched) sit beside the first.
 */
import { execFile } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createDb, type Db, migrate } from "@rhumbatron/db";
import {
  createScriptedChange,
  provisionedProject,
  startFullWorker,
  type TestWorld,
  TOOLCHAIN,
  testWorld,
  waitUntil,
} from "../apps/worker/src/test-world.ts";
import { closeWarmBrowser } from "../apps/worker/src/verification/warm-browser.ts";

type Emit = (o: Record<string, unknown>) => void;
type OpenDatabase = () => Promise<{ url: string; server: string; stop: () => Promise<void> }>;

const LIMIT_MS = 10 * 60 * 1000;
const TEMPLATE = fileURLToPath(new URL("../templates/shop", import.meta.url));
const RISK = (process.env.BENCH_RISK ?? "high") as "low" | "medium" | "high" | "critical";

async function oneChange(w: TestWorld, projectId: string, tag: string) {
  const created = Date.now();
  const changeId = await createScriptedChange(w, projectId, {
    requestId: `verify-${tag}`,
    title: `Bench verification ${tag}`,
    riskTier: RISK,
    tasks: [
      {
        key: "a",
        paths: ["src/wishlist.ts", "public/app.js"],
        editPlan: [
          {
            op: "replace",
            path: "src/wishlist.ts",
            find: "// A wishlist as an immutable value",
            replace: `// (${tag}) A wishlist as an immutable value`,
          },
          {
            op: "replace",
            path: "public/app.js",
            find: "// Demo Shop page",
            replace: `// (${tag}) Demo Shop page`,
          },
        ],
      },
    ],
  });
  const candidate = await waitUntil(
    `${changeId} verified`,
    async () => {
      const stuck = await w.db.task.findFirst({ where: { changeId, state: { in: ["failed", "blocked"] } } });
      if (stuck) throw new Error(`the Task cannot finish: ${stuck.state}`);
      return w.db.candidate.findFirst({ where: { changeId }, orderBy: { createdAt: "desc" } });
    },
    (c) => c !== null && ["verified", "rejected"].includes(c.status),
    LIMIT_MS,
  );
  const polled = Date.now() - created;
  if (!candidate) throw new Error("no Candidate");
  return { changeId, candidate, polled };
}

/** The phases of one verified Change, from its rows. */
async function phases(db: Db, changeId: string, candidateId: string) {
  const change = await db.change.findUniqueOrThrow({ where: { id: changeId } });
  const candidate = await db.candidate.findUniqueOrThrow({ where: { id: candidateId } });
  const instance = await db.workflowInstance.findUniqueOrThrow({
    where: { instanceId: candidateId },
    include: { steps: true },
  });
  const runs = await db.agentRun.findMany({ where: { changeId }, orderBy: { createdAt: "asc" } });
  const evidence = await db.evidence.findMany({ where: { candidateId }, orderBy: { completedAt: "asc" } });
  const at = (step: string) => instance.steps.find((s) => s.step === step)?.completedAt.getTime() ?? null;
  const t0 = change.createdAt.getTime();
  const finish = at("finish");
  if (finish === null) throw new Error("no finish step");
  const checks = evidence.map((e) => {
    const end = e.completedAt.getTime();
    return {
      check: e.checkId,
      status: e.status,
      duration_ms: e.durationMs,
      // Its own command's time (the contract check's base run is not in it): the end is the Evidence's.
      end_ms: end - t0,
    };
  });
  // Checks start once every step before them completed (compose, plan, conflict review).
  const checksStart = Math.max(
    ...instance.steps
      .filter((s) => !/^(check|evidence):|^(finish|settle)$/.test(s.step))
      .map((s) => s.completedAt.getTime()),
  );
  const firstStart = checksStart - t0;
  const lastEnd = Math.max(...checks.map((c) => c.end_ms));
  const sum = checks.reduce((s, c) => s + c.duration_ms, 0);
  const merge = at("merge");
  const composed = at("composed");
  const prepare = at("prepare");
  const runsMs = runs.map((r) => r.updatedAt.getTime() - r.createdAt.getTime());
  return {
    status: candidate.status,
    createToVerified: finish - t0,
    phases: {
      agent_ms: candidate.createdAt.getTime() - t0,
      agent_runs_ms: runsMs,
      start_ms: instance.startedAt.getTime() - candidate.createdAt.getTime(),
      compose_ms: merge === null ? null : merge - instance.startedAt.getTime(),
      plan_ms: merge === null || composed === null ? null : composed - merge,
      prepare_ms: prepare === null || composed === null ? null : prepare - composed,
      checks_start_ms: checksStart - t0,
      gate_ms: finish - t0 - lastEnd,
    },
    checks,
    checksWall: lastEnd - firstStart,
    checksSum: sum,
    plan: (candidate.plan as { checks: { id: string; argv: string[] | null }[] } | null)?.checks ?? [],
  };
}

function sh(file: string, args: string[], cwd: string): Promise<number> {
  const started = performance.now();
  const PATH = [...TOOLCHAIN.map((p) => (p.endsWith("typescript") ? join(p, "bin") : p)), process.env.PATH].join(":");
  return new Promise((resolve) =>
    execFile(file, args, { cwd, env: { PATH, HOME: cwd }, maxBuffer: 64 * 1024 * 1024 }, () =>
      resolve(performance.now() - started),
    ),
  );
}

/** The same command checks, one after another, directly on a copy of the template: no worker, no Sandbox. */
async function rawSequential(plan: { id: string; argv: string[] | null }[]) {
  const dir = await mkdtemp(join(tmpdir(), "rh-bench-raw-"));
  try {
    await cp(TEMPLATE, dir, { recursive: true, filter: (src) => !/\/(dist|node_modules)$/.test(src) });
    const each: Record<string, number> = {};
    let total = 0;
    for (const c of plan) {
      if (!c.argv) continue;
      const [file, ...args] = c.argv as [string, ...string[]];
      const ms = await sh(file, args, dir);
      each[c.id] = Math.round(ms);
      total += ms;
    }
    return { total: Math.round(total), each };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function verificationBench(openDatabase: OpenDatabase, emit: Emit): Promise<void> {
  const dbh = await openDatabase();
  await migrate(dbh.url);
  const db = createDb(dbh.url, { maxConnections: 8 });
  const w = await testWorld(db);
  const projectId = await provisionedProject(w);
  const worker = await startFullWorker(w, dbh.url);
  try {
    emit({ figure: "setup", server: dbh.server, risk: RISK, sandbox: w.sandbox.kind, checks: "template" });
    const figures = [];
    for (const tag of ["first", "second"]) {
      const { changeId, candidate } = await oneChange(w, projectId, tag);
      const p = await phases(db, changeId, candidate.id);
      figures.push(p);
      emit({
        figure: "create_to_verified_ms",
        change: tag,
        status: p.status,
        value: p.createToVerified,
        target_ms: 15_000,
        goal_ms: 10_000,
      });
      emit({ figure: "phases", change: tag, ...p.phases });
      for (const c of p.checks) emit({ figure: "check", change: tag, ...c });
      emit({
        figure: "checks",
        change: tag,
        wall_ms: p.checksWall,
        sum_of_durations_ms: p.checksSum,
        parallelism: +(p.checksSum / Math.max(1, p.checksWall)).toFixed(2),
      });
    }
    const first = figures[0];
    if (first) {
      const raw = await rawSequential(first.plan);
      emit({
        figure: "raw_sequential_commands_ms",
        value: raw.total,
        each: raw.each,
        note: "the plan's command checks run one after another on the host, no Sandbox (the baseline)",
      });
      for (const [i, p] of figures.entries()) {
        emit({
          figure: "ratios",
          change: i === 0 ? "first" : "second",
          checks_wall_to_raw_sequential: +(p.checksWall / Math.max(1, raw.total)).toFixed(2),
          create_to_verified_to_raw_sequential: +(p.createToVerified / Math.max(1, raw.total)).toFixed(2),
        });
      }
    }
  } finally {
    await worker.stop();
    await closeWarmBrowser().catch(() => {});
    await db.$disconnect();
    await dbh.stop();
    await rm(w.dir, { recursive: true, force: true }).catch(() => {});
  }
}
