import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { canonicalRepo, loadConfig, type ProjectChecks, type RhumbatronConfig, workspaceFork } from "@rhumbatron/core";
import { type Db, localFolderBlobStore, recordProjectProvisioned, withRepoToken, withRepoTokens } from "@rhumbatron/db";
import { seedProjects } from "@rhumbatron/db/testing";
import { pgNotifyNudger, withTransaction } from "@rhumbatron/runtime";
import { createSandbox, sandboxLimits } from "../sandbox/index.ts";
import type { SourceHandlerDeps } from "../source/handlers.ts";
import { SourceStore } from "../source/store.ts";
import { noBrowserCheck, policyOnlyChecks } from "../test-world.ts";
import type { VerificationDeps } from "../verification/verification-run.ts";

/**
 * Test support only: the real side of the promotion model (docs/model-check.md). One world per lane
 * of runs: a source store, blob folder and Sandbox in a temporary folder, a clock that can crash,
 * and a pool of ChangeSet commits every run's Changes take theirs from. Each run gets a project of
 * its own, provisioned in that store.
 */
export const TENANT = "ten_model";
export const PERSON = "usr_model";
const enc = (s: string) => new TextEncoder().encode(s);
/** Generation 0 of every run's project; the pool's commits start from the same files. */
const S0_FILES = new Map([
  ["README.md", enc("# shop\n")],
  ["src/index.ts", enc("export const shop = 1;\n")],
]);
/** The most Changes a run makes (each takes two file slots and one README slot of the pool). */
export const MAX_CHANGES = 4;

/** What the clock throws at the reading a command's crash was set for, and at every reading after it. */
export class SimulatedCrash extends Error {
  constructor() {
    super("simulated crash: the worker stopped here");
    this.name = "SimulatedCrash";
  }
}

/**
 * Real time, strictly increasing (two Candidates never share a creation time, which recomposition
 * compares), that can be set to crash: `crashing(k, fn)` runs `fn` with the k-th reading of the
 * clock and every one after it throwing, as if the worker stopped there; whatever had committed stays.
 */
export class CrashClock {
  private last = 0;
  private left: number | null = null;
  private crashed = false;
  readonly now = (): Date => {
    if (this.left !== null) {
      if (this.left <= 0) {
        this.crashed = true;
        throw new SimulatedCrash();
      }
      this.left -= 1;
    }
    this.last = Math.max(Date.now(), this.last + 1);
    return new Date(this.last);
  };

  /**
   * Runs `fn` with a crash at the `at`-th clock reading (none when null); true when it crashed. A
   * crash wrapped in another error (or caught by the code it stopped) is a crash all the same.
   */
  async crashing(at: number | null, fn: () => Promise<unknown>): Promise<boolean> {
    this.left = at === null ? null : at - 1;
    this.crashed = false;
    try {
      await fn();
      return this.crashed;
    } catch (err) {
      if (this.crashed) return true;
      throw err;
    } finally {
      this.left = null;
    }
  }
}

export interface PoolSlot {
  fork: string;
  commit: string;
  path: string;
  content: string;
}

export interface ModelWorld {
  db: Db;
  config: RhumbatronConfig;
  clock: CrashClock;
  root: string;
  store: SourceStore;
  /** The same repositories on a clock that never crashes: projects are provisioned ahead, beside a run. */
  provisioner: SourceStore;
  steady: () => Date;
  deps: SourceHandlerDeps;
  verification: VerificationDeps;
  /** The checks every Candidate's plan reads (the shop's, tiers left to the policy). */
  checks: ProjectChecks;
  pool: { base: string; files: PoolSlot[]; readmes: PoolSlot[] };
}

/** One lane's world, in a temporary folder of its own (the caller removes `root`). */
export async function modelWorld(db: Db): Promise<ModelWorld> {
  const config = loadConfig("dev");
  const clock = new CrashClock();
  const root = await mkdtemp(join(tmpdir(), "rh-model-"));
  const store = new SourceStore({ db, config, now: clock.now, root: join(root, "git") });
  const steady = new CrashClock().now;
  const provisioner = new SourceStore({ db, config, now: steady, root: join(root, "git") });
  const blobs = localFolderBlobStore(join(root, "blobs"));
  const deps = { db, config, nudger: pgNotifyNudger, now: clock.now, source: store, blobs };
  // The plain-process Sandbox the verification's deps name; the model check runs no command in it.
  const sandbox = await createSandbox({
    root: join(root, "sandboxes"),
    limits: sandboxLimits(config),
    log: { warn: () => {} },
    probe: async () => ({ ok: false, reason: "the model check runs no command" }),
  });
  const checks = policyOnlyChecks();
  const verification = { ...deps, sandbox, browserCheck: noBrowserCheck, projectChecks: checks };
  const pool = await changeSetPool({ db, config, clock, store, root });
  return { db, config, clock, root, store, provisioner, steady, deps, verification, checks, pool };
}

/**
 * Commits on the files of S0, each in a workspace fork of its own: a file of its own per Task
 * (`src/m<k>.ts`), or README.md rewritten. Composition replays each one's own diff onto a
 * Candidate's base, so they serve the Changes of every run.
 */
async function changeSetPool(w: Pick<ModelWorld, "db" | "config" | "clock" | "store" | "root">) {
  const base = workspaceFork(`run_${randomUUID()}`);
  const s0 = await repoWork(w, [base], ([t = ""]) => w.store.provision(base, t, S0_FILES, "the pool's base"));
  const slot = async (path: string, content: string): Promise<PoolSlot> => {
    const fork = workspaceFork(`run_${randomUUID()}`);
    const commit = await repoWork(w, [base, fork], async ([from = "", own = ""]) => {
      await w.store.fork(base, from, fork);
      const dir = await mkdtemp(join(w.root, "slot-"));
      await w.store.checkout(fork, own, dir);
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content);
      const made = await w.store.commitAll(dir, `model: ${path}`, { name: "Model", email: "model@localhost" });
      await w.store.push(dir, fork, own);
      await rm(dir, { recursive: true, force: true });
      return made ?? "";
    });
    return { fork, commit, path, content };
  };
  const files = await Promise.all(
    Array.from({ length: MAX_CHANGES * 2 }, (_, k) => slot(`src/m${k}.ts`, `export const m${k} = ${k};\n`)),
  );
  const readmes = await Promise.all(
    Array.from({ length: MAX_CHANGES }, (_, k) => slot("README.md", `# shop, as Change ${k} has it\n`)),
  );
  return { base: s0.commit, files, readmes };
}

/** Runs `fn` with a write token for each repository named (read for the first of two). */
function repoWork<T>(
  w: Pick<ModelWorld, "db" | "config" | "clock">,
  repos: string[],
  fn: (tokens: string[]) => Promise<T>,
): Promise<T> {
  const wanted = repos.map((repo, i) => ({
    repo,
    mode: i === 0 && repos.length > 1 ? ("read" as const) : ("write" as const),
    purpose: "model check",
  }));
  return withRepoTokens(w.db, wanted, w.config, w.clock.now, fn);
}

/** The ChangeSet commit for Task `task` of the run's Change `change`: README.md for a shared Change's first Task. */
export function poolSlot(w: ModelWorld, change: number, task: number, shared: boolean): PoolSlot {
  const slot = shared && task === 0 ? w.pool.readmes[change] : w.pool.files[change * 2 + task];
  if (!slot) throw new Error(`no pool slot for Change ${change}, Task ${task}`);
  return slot;
}

/**
 * A project of the model's tenant at S0, provisioned in the world's store as project.provision
 * records it, on the steady clock (it may be made while a run crashes its own).
 */
export async function newProject(w: ModelWorld): Promise<string> {
  const projectId = `proj_${randomUUID()}`;
  await seedProjects(w.db, [projectId], TENANT);
  const s0 = await withRepoToken(
    w.db,
    { repo: canonicalRepo(projectId), mode: "write", purpose: "provision" },
    w.config,
    w.steady,
    (t) => w.provisioner.provision(projectId, t, S0_FILES, "S0: the model's project"),
  );
  const provisioned = { projectId, commit: s0.commit, tree: s0.tree, causedBy: "model-check" };
  await withTransaction(w.db, (ctx) => recordProjectProvisioned(ctx, provisioned, { ...w.deps, now: w.steady }));
  return projectId;
}

/** Projects made one ahead: the next run's is provisioned while this one runs. */
export function projectsAhead(w: ModelWorld) {
  let next: Promise<string> | null = null;
  return {
    take(): Promise<string> {
      const current = next ?? newProject(w);
      next = newProject(w);
      // Awaited by the next take (or by done); a failure surfaces there, not as an unhandled rejection.
      next.catch(() => {});
      return current;
    },
    async done(): Promise<void> {
      const last = next;
      next = null;
      if (last) await dropRepositories(w, [await last]).catch(() => {});
    },
  };
}

/** The run's repositories go (its rows stay in the database, which is the test's own). */
export async function dropRepositories(w: ModelWorld, repos: string[]): Promise<void> {
  for (const repo of repos) await w.store.delete(repo);
}
