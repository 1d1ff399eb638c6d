import { canonicalRepo } from "@rhumbatron/core";
import { listLandingQueue, setLandWhenReady, withRepoToken } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it, onTestFailed } from "vitest";
import { stoppedAfterEach } from "../test-hooks.ts";
import {
  createScriptedChange,
  WHOLE_WORKER_LIMIT as LIMIT,
  oneFileChange,
  type TestWorld,
  waitForPromoted,
  waitUntil,
  wholeWorkerWithProject,
  worldSnapshot,
} from "../test-world.ts";

/**
 * The landing queue on the whole worker (real Postgres, git repositories, Sandbox and the template's
 * own checks): Changes that land when ready are promoted with no human action, one at a time, and a
 * Candidate made stale by another promotion recomposes itself and lands too.
 */
const t = useTestDatabase();
const running = stoppedAfterEach();

/** A failed or timed-out test prints where its project stood (Changes, Candidates, queue, warnings). */
function explainOnFailure(w: TestWorld, projectId: string) {
  onTestFailed(async () => {
    const snapshot = await worldSnapshot(w, projectId).catch((err: unknown) => ({ unreadable: String(err) }));
    console.error(`where ${projectId} stood:\n${JSON.stringify(snapshot, null, 1)}`);
  });
}

/** A one-Task Change that writes `path`. */
function create(w: TestWorld, projectId: string, requestId: string, path: string, content: string, land: boolean) {
  return oneFileChange(w, projectId, { requestId, title: `Add ${path}`, path, content, landWhenReady: land });
}

/**
 * The files of canonical main once source sync has fast-forwarded it to the newest generation (it
 * follows the promotion on the indexing queue), read through a read token as every git access is.
 */
async function mainFiles(w: TestWorld, projectId: string): Promise<Map<string, string>> {
  const repo = canonicalRepo(projectId);
  const read = <T>(fn: (token: string) => Promise<T>) =>
    withRepoToken(t.db, { repo, mode: "read", purpose: "test" }, w.config, w.deps.now, fn);
  const project = await t.db.project.findUniqueOrThrow({ where: { id: projectId } });
  const newest = await t.db.canonicalGeneration.findUniqueOrThrow({
    where: { projectId_generation: { projectId, generation: project.canonicalGeneration } },
  });
  await waitUntil(
    "main fast-forwarded",
    () => read((token) => w.store.head(repo, token)),
    (h) => h === newest.commit,
    LIMIT,
  );
  return read(async (token) => {
    const head = await w.store.head(repo, token);
    const out = new Map<string, string>();
    for (const f of await w.store.files(repo, token, head)) {
      out.set(f.path, new TextDecoder().decode(await w.store.readBlob(repo, token, f.oid)));
    }
    return out;
  });
}

describe("the landing queue", () => {
  it(
    "lands three Changes created at the same moment, one at a time, with no human action",
    async () => {
      const { w, projectId } = await wholeWorkerWithProject(t.db, t.url, running);
      explainOnFailure(w, projectId);
      const ids = await Promise.all(
        ["one", "two", "three"].map((n) =>
          create(w, projectId, `land-${n}`, `src/land-${n}.ts`, `export const ${n} = "${n}";\n`, true),
        ),
      );
      const queue = await listLandingQueue(t.db, { tenantId: "ten_a", projectId });
      expect(queue.map((e) => e.position)).toEqual([1, 2, 3]);
      expect(new Set(queue.map((e) => e.changeId))).toEqual(new Set(ids));

      await waitForPromoted(w, ids, "all three promoted");
      const files = await mainFiles(w, projectId);
      for (const n of ["one", "two", "three"])
        expect(files.get(`src/land-${n}.ts`)).toBe(`export const ${n} = "${n}";\n`);
      // Three promotions, one generation each, every one by the landing queue.
      const project = await t.db.project.findUniqueOrThrow({ where: { id: projectId } });
      expect(project.canonicalGeneration).toBe(3);
      const promoted = await t.db.candidate.findMany({ where: { projectId, status: "promoted" } });
      expect(promoted.map((c) => c.promotedGeneration).sort()).toEqual([1, 2, 3]);
      const advanced = await t.db.outboxRow.findMany({ where: { projectId, eventType: "canonical.advanced" } });
      expect(advanced.map((r) => (r.envelope as { actor: { id: string } }).actor.id)).toEqual([
        "landing-queue",
        "landing-queue",
        "landing-queue",
      ]);
      expect(await listLandingQueue(t.db, { tenantId: "ten_a", projectId })).toEqual([]);
    },
    LIMIT,
  );

  it(
    "lands a diamond Change (a -> b, a -> c, {b, c} -> d): the join starts from the composition of its dependencies",
    async () => {
      const { w, projectId } = await wholeWorkerWithProject(t.db, t.url, running);
      explainOnFailure(w, projectId);
      const write = (key: string, dependsOn: string[], path: string, content: string) => ({
        key,
        dependsOn,
        paths: [path],
        editPlan: [{ op: "write" as const, path, content }],
      });
      const changeId = await createScriptedChange(w, projectId, {
        requestId: "diamond",
        title: "A diamond",
        landWhenReady: true,
        tasks: [
          write("a", [], "src/d-a.ts", "export const a = 1;\n"),
          write("b", ["a"], "src/d-b.ts", "export const b = 2;\n"),
          write("c", ["a"], "src/d-c.ts", "export const c = 3;\n"),
          // d writes what b and c wrote: it must start from both.
          {
            key: "d",
            dependsOn: ["b", "c"],
            paths: ["src/d-d.ts"],
            editPlan: [
              {
                op: "run",
                argv: [
                  "node",
                  "-e",
                  "const fs=require('fs');fs.writeFileSync('src/d-d.ts',fs.readFileSync('src/d-b.ts','utf8')+fs.readFileSync('src/d-c.ts','utf8'))",
                ],
              },
            ],
          },
        ],
      });
      await waitForPromoted(w, [changeId], "the diamond promoted");
      const files = await mainFiles(w, projectId);
      expect(["a", "b", "c", "d"].map((k) => files.get(`src/d-${k}.ts`))).toEqual([
        "export const a = 1;\n",
        "export const b = 2;\n",
        "export const c = 3;\n",
        // Written by d from what b and c wrote: d started from both.
        "export const b = 2;\nexport const c = 3;\n",
      ]);
    },
    LIMIT,
  );

  it(
    "recomposes a Candidate made stale by another promotion, keeps it verified on the new base, and lands it when asked",
    async () => {
      const { w, projectId } = await wholeWorkerWithProject(t.db, t.url, running);
      explainOnFailure(w, projectId);
      const waiting = await create(w, projectId, "stale-b", "src/b.ts", "export const b = 2;\n", false);
      const first = await waitUntil(
        "the waiting Change verified on S0",
        () => t.db.candidate.findFirst({ where: { changeId: waiting, status: "verified" } }),
        (c) => c !== null,
        LIMIT,
      );
      expect(first?.baseGeneration).toBe(0);

      const lander = await create(w, projectId, "stale-a", "src/a.ts", "export const a = 1;\n", true);
      await waitForPromoted(w, [lander], "the other Change promoted");
      const again = await waitUntil(
        "the waiting Change recomposed and verified on S1",
        () => t.db.candidate.findFirst({ where: { changeId: waiting, baseGeneration: 1 } }),
        (c) => c?.status === "verified",
        LIMIT,
      );
      expect(again).toMatchObject({
        recomposedFrom: first?.id,
        recomposeReason: `recomposed on generation 1 after ${lander} was promoted`,
      });
      expect((await t.db.candidate.findUniqueOrThrow({ where: { id: first?.id ?? "" } })).status).toBe("stale");

      const on = await setLandWhenReady(
        t.db,
        { tenantId: "ten_a", changeId: waiting, on: true, actorId: "usr_lander" },
        w.deps,
      );
      expect(on).toMatchObject({ landWhenReady: true, changed: true, state: { ready: true, waitingFor: "landing" } });
      await waitForPromoted(w, [waiting], "the recomposed Change promoted");
      const files = await mainFiles(w, projectId);
      expect(files.get("src/a.ts")).toBe("export const a = 1;\n");
      expect(files.get("src/b.ts")).toBe("export const b = 2;\n");
    },
    LIMIT,
  );
});
