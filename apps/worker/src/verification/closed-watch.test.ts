import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DEFAULT_COMMAND_ALLOWLIST, type Sandbox } from "@rhumbatron/core";
import { seedChange, seedProjects, useTestDatabase, waitFor } from "@rhumbatron/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bubblewrapAvailable, bubblewrapSandbox, sandboxLimits } from "../sandbox/index.ts";
import { canCopy } from "../sandbox/workspace.ts";
import { testConfig } from "../testing.ts";
import { CandidateClosed, watchCandidateClosed } from "./closed-watch.ts";

const t = useTestDatabase();
const PROJECT = "proj_6f1c9f8e-0000-4000-8000-0000000000c9";
let root: string;
let sandbox: Sandbox;

beforeAll(async () => {
  const probe = await bubblewrapAvailable();
  if (!probe.ok) throw new Error(`bubblewrap cannot run here (${probe.reason}); apt-get install -y bubblewrap`);
  root = await mkdtemp(join(tmpdir(), "rhumbatron-closed-"));
  sandbox = await bubblewrapSandbox({
    root,
    toolchainPaths: [dirname(process.execPath)],
    allowlist: DEFAULT_COMMAND_ALLOWLIST,
    limits: sandboxLimits(testConfig),
  });
  await seedProjects(t.db, [PROJECT]);
}, 60_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

async function candidate(id: string) {
  await seedChange(t.db, PROJECT, `chg_${id}`);
  await t.db.candidate.create({
    data: {
      id,
      projectId: PROJECT,
      changeId: `chg_${id}`,
      compositionKey: id,
      baseGeneration: 0,
      baseCommit: "c0",
      status: "verifying",
    },
  });
}

/** A check that would run for ten minutes, and says when it started. */
const LONG = ["node", "-e", "require('fs').writeFileSync('started', 'yes'); setTimeout(() => {}, 600000)"];

describe("a Candidate closed while its checks run", () => {
  it("stops the running check (in a copy too) and refuses the next, once its Change is cancelled", async () => {
    await candidate("cand_closed1");
    const watch = watchCandidateClosed(t.db, "cand_closed1", 50);
    try {
      const ws = watch.workspace(await sandbox.open({ projectId: PROJECT, dirName: "cand-closed1" }));
      expect(canCopy(ws)).toBe(true);
      if (!canCopy(ws)) return;
      const copy = await ws.copy("targeted");
      const running = copy.run({ argv: LONG, timeoutMs: 600_000 });
      await waitFor("the long check to start", () => existsSync(join(copy.path, "started")));
      await t.db.candidate.update({ where: { id: "cand_closed1" }, data: { status: "cancelled" } });
      const err = await running.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CandidateClosed);
      expect((err as CandidateClosed).status).toBe("cancelled");
      await expect(ws.run({ argv: ["ls"], timeoutMs: 10_000 })).rejects.toBeInstanceOf(CandidateClosed);
      expect(() => watch.check()).toThrow(CandidateClosed);
    } finally {
      watch.stop();
    }
  });

  it("leaves a Candidate that is still verifying alone: its commands run to their end", async () => {
    await candidate("cand_open1");
    const watch = watchCandidateClosed(t.db, "cand_open1", 20);
    try {
      const ws = watch.workspace(await sandbox.open({ projectId: PROJECT, dirName: "cand-open1" }));
      const r = await ws.run({ argv: ["node", "-e", "setTimeout(() => console.log('done'), 300)"], timeoutMs: 60_000 });
      expect(r).toMatchObject({ exitCode: 0, timedOut: false });
      expect(r.stdout.trim()).toBe("done");
      expect(() => watch.check()).not.toThrow();
    } finally {
      watch.stop();
    }
  });
});
