/**
 * `npm run bench -- landing`: N Changes (BENCH_CHANGES, default 5; non-overlapping, low risk, the
 * template project, scripted Agents) created together with "land when ready", on the whole worker
 * (real Postgres, git repositories and Sandbox). Prints JSON lines: the wall time until one Change
 * alone has landed (the baseline, same run), the wall time until all N have landed, its ratio to
 * the baseline, and how many Candidates and recompositions that took. BENCH_REAL_CHECKS=1 runs the
 * template's own checks instead of fast node one-liners.
 */
import { createDb, type Db, migrate } from "@rhumbatron/db";
import {
  createScriptedChange,
  fastChecksPolicy,
  provisionedProject,
  startFullWorker,
  type TestWorld,
  testWorld,
  waitUntil,
} from "../apps/worker/src/test-world.ts";

type Emit = (o: Record<string, unknown>) => void;
type OpenDatabase = () => Promise<{ url: string; server: string; stop: () => Promise<void> }>;

const LIMIT_MS = 30 * 60 * 1000;

async function landAll(db: Db, w: TestWorld, projectId: string, n: number, tag: string): Promise<number> {
  const started = Date.now();
  const ids = await Promise.all(
    Array.from({ length: n }, (_, i) => {
      const path = `src/bench-${tag}-${i}.ts`;
      return createScriptedChange(w, projectId, {
        requestId: `${tag}-${i}`,
        title: `Bench ${tag} ${i}`,
        landWhenReady: true,
        tasks: [{ key: "a", paths: [path], editPlan: [{ op: "write", path, content: `export const n = ${i};\n` }] }],
      });
    }),
  );
  await waitUntil(
    `${n} Change(s) landed`,
    async () => {
      const stuck = await db.task.findFirst({
        where: { changeId: { in: ids }, state: { in: ["failed", "blocked"] } },
        include: { runs: { orderBy: { createdAt: "desc" }, take: 1 } },
      });
      if (stuck)
        throw new Error(`a Task cannot land: ${stuck.state}: ${stuck.runs[0]?.error ?? stuck.blockedLimit ?? ""}`);
      return (await db.change.findMany({ where: { id: { in: ids } } })).map((c) => c.status);
    },
    (s) => s.length === n && s.every((x) => x === "promoted"),
    LIMIT_MS,
  );
  return Date.now() - started;
}

export async function landingBench(openDatabase: OpenDatabase, emit: Emit): Promise<void> {
  const n = Number(process.env.BENCH_CHANGES ?? 5);
  const dbh = await openDatabase();
  await migrate(dbh.url);
  const db = createDb(dbh.url, { maxConnections: 8 });
  const w = await testWorld(db);
  const projectId = await provisionedProject(w);
  const policy = process.env.BENCH_REAL_CHECKS === "1" ? undefined : fastChecksPolicy();
  const worker = await startFullWorker(w, dbh.url, policy ? { policy } : {});
  try {
    emit({ figure: "setup", server: dbh.server, changes: n, checks: policy ? "fast" : "template" });
    const one = await landAll(db, w, projectId, 1, "one");
    emit({ figure: "one_change_landed_ms", value: one });
    const before = await db.candidate.count({ where: { projectId } });
    const all = await landAll(db, w, projectId, n, "many");
    const candidates = (await db.candidate.count({ where: { projectId } })) - before;
    const recomposed = await db.candidate.count({ where: { projectId, recomposedFrom: { not: null } } });
    emit({
      figure: "n_changes_landed_ms",
      changes: n,
      value: all,
      ratio_to_one_change: +(all / one).toFixed(2),
      candidates,
      recompositions: recomposed,
    });
  } finally {
    await worker.stop();
    await db.$disconnect();
    await dbh.stop();
  }
}
