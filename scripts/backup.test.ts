import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalRepo } from "@rhumbatron/core";
import { lastGenerations } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, describe, expect, it } from "vitest";
import {
  explainOnFailure,
  fastChecksPolicy,
  oneFileChange,
  startFullWorker,
  testWorld,
  WHOLE_WORKER_LIMIT,
  waitForPromoted,
  waitUntil,
  wholeWorkerWithProject,
} from "../apps/worker/src/test-world.ts";
import { restoreBackup, takeBackup } from "./lib/backup.ts";

/**
 * Backup and restore (docs/production.md, "Backup and restore") on real installations: a whole
 * worker lands Changes while the backup is taken; the backup goes into a fresh database and data
 * folder; there, every project's main is its last promoted generation (command-line git is the
 * oracle), every Evidence blob reads, and the Change that was in flight lands by itself.
 */
const source = useTestDatabase();
const target = useTestDatabase();
const running: { stop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const r of running.splice(0)) await r.stop();
});

const gitMain = (gitdir: string) =>
  execFileSync("git", ["--git-dir", gitdir, "rev-parse", "refs/heads/main"], { encoding: "utf8" }).trim();

describe("backup and restore", () => {
  it(
    "restores a backup taken while Changes land: main is the last generation, Evidence reads, the Change in flight lands",
    async () => {
      const { w, projectId } = await wholeWorkerWithProject(source.db, source.url, running);
      explainOnFailure(w, projectId);
      const first = await oneFileChange(w, projectId, {
        requestId: "bk-1",
        title: "First",
        path: "src/first.ts",
        content: "export const first = 1;\n",
        landWhenReady: true,
      });
      await waitForPromoted(w, [first]);
      const inFlight = await oneFileChange(w, projectId, {
        requestId: "bk-2",
        title: "In flight",
        path: "src/second.ts",
        content: "export const second = 2;\n",
        landWhenReady: true,
      });
      const folder = join(mkdtempSync(join(tmpdir(), "rh-backup-")), "backup");
      const manifest = await takeBackup({ db: w.db, blobs: w.blobs, gitRoot: w.root }, folder);
      expect(manifest.tables.projects).toBe(1);
      // The source goes on landing after the backup: its repositories are ahead of the backup's rows.
      await waitForPromoted(w, [inFlight]);
      for (const r of running.splice(0)) await r.stop();

      const fresh = await testWorld(target.db);
      const restored = await restoreBackup(folder, { db: fresh.db, blobs: fresh.blobs, gitRoot: fresh.root });
      explainOnFailure(fresh, projectId);
      expect(restored.mains.filter((m) => m.problem)).toEqual([]);
      for (const g of await lastGenerations(fresh.db)) {
        expect(gitMain(join(fresh.root, canonicalRepo(g.projectId)))).toBe(g.commit);
      }
      const evidence = await fresh.db.evidence.findMany({ where: { outputKey: { not: null } } });
      expect(evidence.length).toBeGreaterThan(0);
      for (const e of evidence) expect(await fresh.blobs.has(e.outputKey ?? "")).toBe(true);

      // A worker on the restored installation finishes what was in flight (or it is visibly failed).
      running.push(await startFullWorker(fresh, target.url, { policy: fastChecksPolicy() }));
      await waitForPromoted(fresh, [inFlight], "the Change in flight at the backup landed after the restore");
      // main follows a promotion through the source sync (the release), a moment after the row.
      const [last] = (await lastGenerations(fresh.db)).filter((g) => g.projectId === projectId);
      await waitUntil(
        "the restored main at the generation the in-flight Change landed",
        async () => gitMain(join(fresh.root, canonicalRepo(projectId))),
        (head) => head === last?.commit,
        WHOLE_WORKER_LIMIT,
      );
    },
    WHOLE_WORKER_LIMIT,
  );

  it("refuses a folder that is not a backup, writing nothing", async () => {
    const fresh = await testWorld(target.db);
    const empty = mkdtempSync(join(tmpdir(), "rh-not-a-backup-"));
    await expect(restoreBackup(empty, { db: fresh.db, blobs: fresh.blobs, gitRoot: fresh.root })).rejects.toMatchObject(
      {
        code: "INVALID_INPUT",
      },
    );
  });
});
