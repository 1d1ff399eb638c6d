/**
 * `npm run bench -- import`: each vendored open-source repository (packages/fixtures/src/repos.ts)
 * brought to Rhumbatron and verified twice, on a real Postgres, git repositories, bubblewrap Sandbox
 * and, for the npm one, a real Verdaccio reached through the registry proxy. Prints JSON lines, each
 * figure read from the clock around a real operation or from the recorded Evidence:
 *   import_ms               a working repository of the fixture -> an active project (import + provision)
 *   first_verification_ms   a Change -> its Candidate verified (setup runs: dependencies installed)
 *   second_verification_ms  another Change -> verified (setup restored from the cache)
 *   setup_ms                each verification's setup Evidence (its duration; cache hit or not)
 * Baseline, same run: the fixture's setup commands and its test command run directly on the host in a
 * plain copy (no worker, no Sandbox, no proxy: npm straight to the same Verdaccio), `host_*_ms`,
 * and the ratios of the two verifications to that.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createDb, migrate } from "@rhumbatron/db";
import { type FixtureRepo, jsLib, pyLib, registryTarballs, startLocalRegistry } from "@rhumbatron/fixtures";
import {
  candidateFor,
  importedProject,
  type TestWorld,
  testWorld,
  verificationDeps,
} from "../apps/worker/src/test-world.ts";
import { drainVerifications } from "../apps/worker/src/verification/runner.ts";

type Emit = (o: Record<string, unknown>) => void;
type OpenDatabase = () => Promise<{ url: string; server: string; stop: () => Promise<void> }>;

const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
  const t = performance.now();
  const r = await f();
  return [r, Math.round(performance.now() - t)];
};

/** Runs argv on the host in `cwd`; its wall time in ms, or throws with its output when it fails. */
function onHost(argv: string[], cwd: string): Promise<number> {
  const started = performance.now();
  const [file, ...args] = argv as [string, ...string[]];
  return new Promise((resolve, reject) =>
    execFile(
      file,
      args,
      { cwd, env: { PATH: process.env.PATH ?? "", HOME: cwd, npm_config_cache: join(cwd, ".npm-cache") } },
      (err, stdout, stderr) =>
        err ? reject(new Error(`${argv.join(" ")}: ${stderr || stdout}`)) : resolve(performance.now() - started),
    ),
  );
}

/** The fixture's own commands, one after another, on a plain copy on the host: the baseline. */
async function hostBaseline(repo: FixtureRepo) {
  const dir = await mkdtemp(join(tmpdir(), "rh-bench-import-host-"));
  try {
    for (const [path, body] of Object.entries(repo.files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), body);
    }
    let setup = 0;
    for (const argv of repo.setup) setup += await onHost(argv, dir);
    const check = await onHost(repo.check, dir);
    return { setup: Math.round(setup), check: Math.round(check) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function verifyOnce(w: TestWorld, projectId: string, requestId: string) {
  const { candidateId } = await candidateFor(w, projectId, {
    requestId,
    tasks: [{ key: "a", editPlan: [{ op: "write", path: `bench/${requestId}.md`, content: `${requestId}\n` }] }],
  });
  const [outcomes, ms] = await timed(() => drainVerifications(verificationDeps(w)));
  const outcome = outcomes.find((o) => o.candidateId === candidateId)?.outcome ?? "none";
  const setup = await w.db.evidence.findMany({ where: { candidateId, kind: "setup" } });
  return {
    outcome,
    ms,
    setup: setup.map((e) => ({
      step: e.checkId,
      ms: e.durationMs,
      cache_hit: (e.metrics as { cacheHit?: number }).cacheHit === 1,
    })),
  };
}

export async function importBench(openDatabase: OpenDatabase, emit: Emit): Promise<void> {
  const dbh = await openDatabase();
  await migrate(dbh.url);
  const db = createDb(dbh.url, { maxConnections: 8 });
  const registryDir = await mkdtemp(join(tmpdir(), "rh-bench-registry-"));
  const registry = await startLocalRegistry({ dir: registryDir, tarballs: registryTarballs() });
  const w = await testWorld(db);
  try {
    emit({ figure: "setup", server: dbh.server, sandbox: w.sandbox.kind, registry: registry.url });
    for (const repo of [jsLib(registry.url), pyLib()]) {
      const [projectId, importMs] = await timed(() => importedProject(w, repo.files));
      const first = await verifyOnce(w, projectId, "bench-first");
      const second = await verifyOnce(w, projectId, "bench-second");
      const host = await hostBaseline(repo);
      const hostTotal = host.setup + host.check;
      emit({ figure: "import_ms", fixture: repo.name, value: importMs });
      emit({
        figure: "first_verification_ms",
        fixture: repo.name,
        outcome: first.outcome,
        value: first.ms,
        setup: first.setup,
      });
      emit({
        figure: "second_verification_ms",
        fixture: repo.name,
        outcome: second.outcome,
        value: second.ms,
        setup: second.setup,
      });
      emit({
        figure: "host_baseline_ms",
        fixture: repo.name,
        setup: host.setup,
        check: host.check,
        total: hostTotal,
        note: "the same setup and test commands, one after another, on a plain copy on the host (no worker, no Sandbox)",
      });
      emit({
        figure: "ratios",
        fixture: repo.name,
        first_verification_to_host: +(first.ms / Math.max(1, hostTotal)).toFixed(2),
        second_verification_to_host: +(second.ms / Math.max(1, hostTotal)).toFixed(2),
      });
    }
  } finally {
    await registry.stop();
    await rm(registryDir, { recursive: true, force: true }).catch(() => {});
    await db.$disconnect();
    await dbh.stop();
    await rm(w.dir, { recursive: true, force: true }).catch(() => {});
  }
}
