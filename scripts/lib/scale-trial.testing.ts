import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalRepo, commandIds, repoNamespace } from "@rhumbatron/core";
import type { Db } from "@rhumbatron/db";
import { enqueueCommand, withTransaction } from "@rhumbatron/runtime";
import { createScriptedChange, type TestWorld, testWorld, waitUntil } from "../../apps/worker/src/test-world.ts";
import { checkInvariants, type InvariantReport } from "../chaos/invariants.ts";
import { freePort } from "./ports.ts";

export { S3RVER_CREDENTIALS, type S3rver, startS3rver } from "../../packages/db/src/blob/testing/s3rver.ts";

import { type Managed, signalGroup, startProcess, stopProcess, waitForHttp } from "./processes.ts";
import { ROOT } from "./stack.ts";

/**
 * Several worker processes on one Postgres with nothing else shared (docs/scale-out.md): each has a
 * data folder of its own; worker 1 holds the repositories and is the source service the others
 * reach over HTTP (RHUMBATRON_SOURCE_URL); blobs are in one S3-compatible bucket. Changes are
 * created together and land by themselves; with `kill`, the last worker is killed with SIGKILL
 * while it holds work, and the others must finish it. Used by scripts/scale.test.ts and
 * `npm run bench -- scale` (a harness of real processes, hence `.testing`: it may start s3rver).
 */
export interface S3Settings {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface ScaleTrialOptions {
  db: Db;
  databaseUrl: string;
  workers: number;
  changes: number;
  s3: S3Settings;
  kill?: boolean;
  limitMs: number;
  log: (line: string) => void;
}

export interface ScaleTrialResult {
  workers: number;
  landed: number;
  of: number;
  /** From the Changes' creation to the last one landed. */
  ms: number;
  /** Work a second process did again: duplicate completed runs, ChangeSets, promotions, Events (the chaos trial's count). */
  duplicates: number;
  killed: { worker: number; held: string } | null;
  invariants: InvariantReport;
}

/** The fault trial's invariants that count work done twice (scripts/chaos/invariants.ts). */
const DUPLICATE_COUNTS = [
  "no Event appears twice",
  "each Change promoted exactly once",
  "no Evidence record twice",
  "no Task has two finished runs",
];

const WORKER_MAIN = join(ROOT, "apps/worker/src/main.ts");

export async function scaleTrial(o: ScaleTrialOptions): Promise<ScaleTrialResult> {
  const base = mkdtempSync(join(tmpdir(), "rh-scale-"));
  const gitPort = await freePort();
  const common = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? base,
    DATABASE_URL: o.databaseUrl,
    RHUMBATRON_LOG_LEVEL: "warn",
    RHUMBATRON_BLOB_STORE: "s3",
    RHUMBATRON_S3_ENDPOINT: o.s3.endpoint,
    RHUMBATRON_S3_BUCKET: o.s3.bucket,
    RHUMBATRON_S3_REGION: "auto",
    RHUMBATRON_S3_ACCESS_KEY_ID: o.s3.accessKeyId,
    RHUMBATRON_S3_SECRET_ACCESS_KEY: o.s3.secretAccessKey,
  };
  const dataDir = (i: number) => {
    const dir = join(base, `worker-${i}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const workers: Managed[] = [];
  const start = async (i: number) => {
    const own =
      i === 1
        ? { RHUMBATRON_GIT_PORT: String(gitPort) }
        : { RHUMBATRON_GIT_PORT: "0", RHUMBATRON_SOURCE_URL: `http://127.0.0.1:${gitPort}` };
    const env = {
      ...common,
      ...own,
      RHUMBATRON_DATA_DIR: dataDir(i),
      RHUMBATRON_WORKER_PORT: String(await freePort()),
    };
    // Node itself with tsx's loader, so the process's pid is the worker's (its heartbeat names it).
    workers[i - 1] = startProcess(`worker-${i}`, process.execPath, ["--import", "tsx", WORKER_MAIN], {
      cwd: ROOT,
      env,
      quiet: true,
    });
  };
  try {
    await start(1);
    // The source service answers once worker 1 is up (a 404 for an unknown path is an answer).
    await waitForHttp(`http://127.0.0.1:${gitPort}/git/`, { timeoutMs: 60_000 });
    for (let i = 2; i <= o.workers; i++) await start(i);
    const w = await testWorld(o.db);
    const projectId = await provisionThroughWorkers(w);
    o.log(`project ${projectId} provisioned by the workers`);
    const started = Date.now();
    const changeIds: string[] = [];
    for (let i = 0; i < o.changes; i++) changeIds.push(await ownFileChange(w, projectId, i));
    const killed = o.kill ? await killWhileHolding(o.db, workers, o.workers) : null;
    if (killed) o.log(`killed worker ${killed.worker} (SIGKILL) while it held ${killed.held}`);
    await waitUntil(
      `${o.changes} Changes landed on ${o.workers} workers`,
      () => o.db.change.findMany({ where: { id: { in: changeIds } }, select: { status: true } }),
      (rows) => rows.every((r) => ["promoted", "rejected", "cancelled", "failed"].includes(r.status)),
      o.limitMs,
    );
    const ms = Date.now() - started;
    const landed = await o.db.change.count({ where: { id: { in: changeIds }, status: "promoted" } });
    const check = () =>
      checkInvariants({
        databaseUrl: o.databaseUrl,
        projectId,
        changeIds,
        canonicalRepoDir: join(dataDir(1), "git", repoNamespace("dev"), canonicalRepo(projectId)),
      });
    // main follows the last promotion a moment after its row (the release moves it), and a
    // workflow still finishing is work in flight: the report is read once it has settled.
    const invariants = await waitUntil("the invariants to hold", check, (r) => r.ok, 60_000).catch(() => check());
    const duplicates = invariants.invariants
      .filter((i) => DUPLICATE_COUNTS.some((d) => i.name.startsWith(d)) && typeof i.found === "number")
      .reduce((n, i) => n + (i.found as number), 0);
    return { workers: o.workers, landed, of: o.changes, ms, duplicates, killed, invariants };
  } finally {
    for (const p of workers.filter(Boolean)) await stopProcess(p, 5_000);
  }
}

/** The project is made as an admin makes one: a row and its provision command, which a worker runs. */
async function provisionThroughWorkers(w: TestWorld): Promise<string> {
  const projectId = `proj_${crypto.randomUUID()}`;
  await w.db.tenant.upsert({
    where: { id: "ten_a" },
    create: { id: "ten_a", slug: "ten_a", name: "ten_a" },
    update: {},
  });
  await w.db.project.create({ data: { id: projectId, tenantId: "ten_a", name: projectId } });
  await withTransaction(w.db, (ctx) =>
    enqueueCommand(
      ctx,
      { commandId: commandIds.provision(projectId), commandType: "project.provision", projectId, payload: {} },
      w.deps,
    ),
  );
  await waitUntil(
    "the project provisioned",
    () => w.db.canonicalGeneration.count({ where: { projectId } }),
    (n) => n > 0,
    120_000,
  );
  return projectId;
}

const ownFileChange = (w: TestWorld, projectId: string, i: number) =>
  createScriptedChange(w, projectId, {
    requestId: `scale-${projectId}-${i}`,
    title: `Add src/scale-${i}.ts`,
    tasks: [
      {
        key: "a",
        paths: [`src/scale-${i}.ts`],
        editPlan: [{ op: "write", path: `src/scale-${i}.ts`, content: `export const n${i} = ${i};\n` }],
      },
    ],
    landWhenReady: true,
  });

/**
 * Waits until the last worker holds an Agent run or a verification (its heartbeat names its pid),
 * then kills its process group with SIGKILL: what it held must be taken over by the others.
 */
async function killWhileHolding(db: Db, workers: Managed[], n: number): Promise<{ worker: number; held: string }> {
  const victim = workers[n - 1];
  const pid = victim?.child.pid;
  if (!victim || pid === undefined) throw new Error(`worker ${n} is not running`);
  const held = await waitUntil(
    `worker ${n} holding work`,
    async () => {
      const beat = await db.workerHeartbeat.findFirst({ where: { pid }, orderBy: { startedAt: "desc" } });
      if (!beat) return null;
      const run = await db.agentRun.findFirst({ where: { runnerId: beat.workerId, status: "running" } });
      if (run) return `Agent run ${run.id}`;
      const wf = await db.workflowInstance.findFirst({ where: { leaseOwner: beat.workerId, status: "running" } });
      return wf ? `verification ${wf.instanceId}` : null;
    },
    (v) => v !== null,
    120_000,
  );
  signalGroup(pid, "SIGKILL");
  await victim.exited;
  return { worker: n, held: held ?? "" };
}
