/**
 * `npm run bench -- landing`: N Changes (BENCH_CHANGES, default 5; non-overlapping, low risk, the
 * template project, scripted Agents) created together with "land when ready", on the whole worker
 * (real Postgres, git repositories and Sandbox). Prints JSON lines: the wall time until one Change
 * alone has landed (the baseline, same run), the wall time until all N have landed, its ratio to
 * the baseline, and how many Candidates, recompositions and stacked Candidates that took. Then
 * BENCH_APPEND_CHANGES (default 20) Changes that each add a line at the same place of CHANGELOG.md,
 * which the template's checks file names append-only: all must land with no conflict and no human
 * action, every line kept; the speculative stack (docs/landing.md) builds each on the one below, so
 * none is recomposed for every promotion ahead of it. BENCH_REAL_CHECKS=1 runs the template's own
 * checks instead of fast node one-liners.
 */
import { canonicalRepo } from "@rhumbatron/core";
import { createDb, type Db, migrate, withRepoToken } from "@rhumbatron/db";
import {
  createScriptedChange,
  fastChecksPolicy,
  provisionedProject,
  startFullWorker,
  type TestWorld,
  testWorld,
  waitUntil,
  worldSnapshot,
} from "../apps/worker/src/test-world.ts";

type Emit = (o: Record<string, unknown>) => void;
type OpenDatabase = () => Promise<{ url: string; server: string; stop: () => Promise<void> }>;

const LIMIT_MS = Number(process.env.BENCH_LIMIT_MS ?? 30 * 60 * 1000);

type Task = Parameters<typeof createScriptedChange>[2]["tasks"][number];

/** A Task that writes a file of its own. */
const ownFile = (tag: string, i: number): Task => {
  const path = `src/bench-${tag}-${i}.ts`;
  return { key: "a", paths: [path], editPlan: [{ op: "write", path, content: `export const n = ${i};\n` }] };
};

/** A Task that adds its line under the changelog's heading, where every other one adds its own. */
const changelogLine = (tag: string, i: number): Task => ({
  key: "a",
  paths: ["CHANGELOG.md"],
  editPlan: [{ op: "replace", path: "CHANGELOG.md", find: "# Changes\n", replace: `# Changes\n- ${tag} ${i}\n` }],
});

async function landAll(
  db: Db,
  w: TestWorld,
  projectId: string,
  n: number,
  tag: string,
  task: (tag: string, i: number) => Task = ownFile,
): Promise<number> {
  const started = Date.now();
  const ids = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      createScriptedChange(w, projectId, {
        requestId: `${tag}-${i}`,
        title: `Bench ${tag} ${i}`,
        landWhenReady: true,
        tasks: [task(tag, i)],
      }),
    ),
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
      const rejected = await db.candidate.findFirst({ where: { changeId: { in: ids }, status: "rejected" } });
      if (rejected) {
        const failed = await db.evidence.findMany({
          where: { candidateId: rejected.id, status: { not: "pass" } },
          select: { checkId: true, status: true, detail: true, outputTail: true },
        });
        throw new Error(`a Candidate was rejected: ${rejected.rejectionReason ?? "?"}: ${JSON.stringify(failed)}`);
      }
      return (await db.change.findMany({ where: { id: { in: ids } } })).map((c) => c.status);
    },
    (s) => s.length === n && s.every((x) => x === "promoted"),
    LIMIT_MS,
  );
  if (process.env.BENCH_TIMELINE === "1") await timeline(db, ids, started);
  return Date.now() - started;
}

/** BENCH_TIMELINE=1: when each Change's Candidates were created, composed, verified and landed (ms from the start), on stderr. */
async function timeline(db: Db, ids: string[], started: number): Promise<void> {
  const types = [
    "task.completed",
    "candidate.created",
    "candidate.composed",
    "candidate.verified",
    "canonical.advanced",
  ];
  const rows = await db.outboxRow.findMany({ where: { eventType: { in: types } }, orderBy: { id: "asc" } });
  for (const r of rows) {
    const e = r.envelope as { changeId?: string; timestamp: string };
    if (!e.changeId || !ids.includes(e.changeId)) continue;
    console.error(
      `${String(new Date(e.timestamp).getTime() - started).padStart(6)} ms  ${e.changeId.slice(-6)} ${r.eventType}`,
    );
  }
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
      stacked: await db.candidate.count({ where: { projectId, stackedOn: { not: null } } }),
    });
    const m = Number(process.env.BENCH_APPEND_CHANGES ?? 20);
    const beforeAppend = await db.candidate.count({ where: { projectId } });
    const appendStart = new Date();
    const appended = await landAll(db, w, projectId, m, "log", changelogLine);
    const log = await mainFile(w, projectId, "CHANGELOG.md");
    const kept = Array.from({ length: m }, (_, i) => `- log ${i}\n`).filter((l) => log.includes(l)).length;
    if (kept !== m) throw new Error(`CHANGELOG.md kept ${kept} of ${m} lines:\n${log}`);
    emit({
      figure: "append_changes_landed_ms",
      changes: m,
      value: appended,
      ratio_to_one_change: +(appended / one).toFixed(2),
      lines_kept: kept,
      conflicts: await db.candidate.count({ where: { projectId, rejectionReason: "merge conflict" } }),
      candidates: (await db.candidate.count({ where: { projectId } })) - beforeAppend,
      recompositions: await db.candidate.count({
        where: { projectId, recomposedFrom: { not: null }, createdAt: { gt: appendStart } },
      }),
      // A person would have promoted (an actor other than the queue) or approved.
      human_actions: await humanActions(db, projectId),
    });
  } catch (err) {
    // Where the project stood (its Changes, Candidates, queues and the worker's warnings), so a wedge explains itself.
    console.error(JSON.stringify(await worldSnapshot(w, projectId), null, 1));
    throw err;
  } finally {
    await worker.stop();
    await db.$disconnect();
    await dbh.stop();
  }
}

/**
 * A file of canonical main once source sync has fast-forwarded it to the newest generation (it
 * follows the promotion on the indexing queue), read through a read token.
 */
async function mainFile(w: TestWorld, projectId: string, path: string): Promise<string> {
  const repo = canonicalRepo(projectId);
  const read = <T>(fn: (token: string) => Promise<T>) =>
    withRepoToken(w.db, { repo, mode: "read", purpose: "bench" }, w.config, w.deps.now, fn);
  const newest = await w.db.canonicalGeneration.findFirstOrThrow({
    where: { projectId },
    orderBy: { generation: "desc" },
  });
  await waitUntil(
    "main at the newest generation",
    () => read((t) => w.store.head(repo, t)),
    (h) => h === newest.commit,
    LIMIT_MS,
  );
  return read(async (token) => {
    const f = (await w.store.files(repo, token, newest.commit)).find((x) => x.path === path);
    return f ? new TextDecoder().decode(await w.store.readBlob(repo, token, f.oid)) : "";
  });
}

async function humanActions(db: Db, projectId: string): Promise<number> {
  const advanced = await db.outboxRow.findMany({ where: { projectId, eventType: "canonical.advanced" } });
  const byPeople = advanced.filter((r) => (r.envelope as { actor: { id: string } }).actor.id !== "landing-queue");
  return byPeople.length + (await db.outboxRow.count({ where: { projectId, eventType: "approval.granted" } }));
}
