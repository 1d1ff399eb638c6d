import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sourceKeys } from "@rhumbatron/core";
import { localFolderBlobStore, recordContextPacket } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACME, emailFor, OTHER, OUTSIDER_EMAIL, ROLES, seedTenants } from "../testing/fixtures.ts";
import { testServices } from "../testing/services.ts";
import { createContext } from "../trpc.ts";
import { createCaller } from "./_app.ts";

/** change.changeSets, change.candidates and change.patch (the Change page's API). */
const t = useTestDatabase();
const shop = "proj_00000000-0000-4000-8000-00000000a001";
const secret = "proj_00000000-0000-4000-8000-00000000b001";
const PATCH =
  "diff --git a/src/banner.ts b/src/banner.ts\nnew file mode 100644\n--- /dev/null\n+++ b/src/banner.ts\n@@ -0,0 +1 @@\n+export const banner = 'Hi';\n";

let dir: string;
let blobs: ReturnType<typeof localFolderBlobStore>;

function callerAs(email: string) {
  return createCaller(
    createContext({
      db: t.db,
      headers: new Headers(),
      localUserEmail: email,
      services: { ...testServices(), blobs },
    }),
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rhumbatron-change-page-"));
  blobs = localFolderBlobStore(dir);
  await seedTenants(t.db);
  for (const [id, projectId] of [
    ["chg_mine", shop],
    ["chg_theirs", secret],
  ] as const) {
    await t.db.change.create({
      data: {
        id,
        projectId,
        title: id,
        riskTier: "low",
        clientRequestId: id,
        tasks: { create: [{ id: `tsk_${id}_a`, key: "a", title: "A", state: "completed" }] },
        runs: {
          create: [
            { id: `run_${id}`, taskId: `tsk_${id}_a`, agentId: "agt_1", wakeCommandId: `w_${id}`, reason: "ready" },
          ],
        },
      },
    });
  }
  const cs = (id: string, changeId: string, patchRef: string | null) => ({
    id,
    changeId,
    taskId: `tsk_${changeId}_a`,
    runId: `run_${id}`,
    agentId: "agt_1",
    fork: `ws-${id}`,
    baseCommit: "a".repeat(40),
    commit: "b".repeat(40),
    paths: ["src/banner.ts"],
    patchRef,
    patchBytes: PATCH.length,
  });
  await t.db.changeSet.createMany({
    data: [
      cs("cs_stored", "chg_mine", sourceKeys.changesetPatch(shop, "cs_stored")),
      { ...cs("cs_none", "chg_mine", null), paths: ["src/banner.ts", "README.md"], outsidePaths: ["README.md"] },
      cs("cs_gone", "chg_mine", sourceKeys.changesetPatch(shop, "cs_gone")),
      cs("cs_astray", "chg_mine", sourceKeys.changesetPatch(secret, "cs_theirs")),
      cs("cs_theirs", "chg_theirs", sourceKeys.changesetPatch(secret, "cs_theirs")),
    ],
  });
  await blobs.put(sourceKeys.changesetPatch(shop, "cs_stored"), new TextEncoder().encode(PATCH), {
    truncated: "false",
    fullSize: String(PATCH.length),
  });
  await blobs.put(sourceKeys.changesetPatch(secret, "cs_theirs"), new TextEncoder().encode("secret diff"));
  await t.db.candidate.createMany({
    data: [
      {
        id: "cand_mine",
        projectId: shop,
        changeId: "chg_mine",
        compositionKey: "k1",
        baseGeneration: 0,
        baseCommit: "a",
      },
      {
        id: "cand_theirs",
        projectId: secret,
        changeId: "chg_theirs",
        compositionKey: "k2",
        baseGeneration: 0,
        baseCommit: "a",
      },
    ],
  });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("change.changeSets and change.candidates", () => {
  it.each(ROLES)("list the Change's ChangeSets and Candidates for a %s", async (role) => {
    const caller = callerAs(emailFor(role));
    const sets = await caller.change.changeSets({ tenantId: ACME.tenantId, changeId: "chg_mine" });
    expect(sets.map((s) => [s.id, s.taskKey, s.hasPatch])).toEqual(
      expect.arrayContaining([
        ["cs_stored", "a", true],
        ["cs_none", "a", false],
      ]),
    );
    expect(sets).toHaveLength(4);
    // Edits outside the Task's declared paths are named on the ChangeSet (the page's note and the gate's gap).
    expect(sets.find((s) => s.id === "cs_none")?.outsidePaths).toEqual(["README.md"]);
    expect(sets.find((s) => s.id === "cs_stored")?.outsidePaths).toEqual([]);
    const candidates = await caller.change.candidates({ tenantId: ACME.tenantId, changeId: "chg_mine" });
    expect(candidates.map((c) => [c.id, c.status])).toEqual([["cand_mine", "created"]]);
  });

  it("answers another tenant's Change with NOT_FOUND and a non-member with FORBIDDEN", async () => {
    const admin = callerAs(emailFor("admin"));
    await expect(admin.change.changeSets({ tenantId: ACME.tenantId, changeId: "chg_theirs" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(admin.change.candidates({ tenantId: ACME.tenantId, changeId: "chg_theirs" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    const outsider = callerAs(OUTSIDER_EMAIL);
    await expect(outsider.change.changeSets({ tenantId: ACME.tenantId, changeId: "chg_mine" })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(outsider.change.candidates({ tenantId: OTHER.tenantId, changeId: "chg_mine" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});

describe("change.patch", () => {
  it("reads a ChangeSet's stored patch from the blob store for a viewer", async () => {
    const p = await callerAs(emailFor("viewer")).change.patch({ tenantId: ACME.tenantId, changeSetId: "cs_stored" });
    expect(p).toEqual({ changeSetId: "cs_stored", text: PATCH, truncated: false, fullBytes: PATCH.length });
  });

  it("says there is no text when no patch was published or the blob is gone", async () => {
    const viewer = callerAs(emailFor("viewer"));
    expect(await viewer.change.patch({ tenantId: ACME.tenantId, changeSetId: "cs_none" })).toMatchObject({
      text: null,
    });
    expect(await viewer.change.patch({ tenantId: ACME.tenantId, changeSetId: "cs_gone" })).toMatchObject({
      text: null,
    });
  });

  it("never reads a key outside the ChangeSet's own project", async () => {
    await expect(
      callerAs(emailFor("admin")).change.patch({ tenantId: ACME.tenantId, changeSetId: "cs_astray" }),
    ).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
  });

  it("answers another tenant's ChangeSet with NOT_FOUND and a non-member with FORBIDDEN, without its text", async () => {
    const err = await callerAs(emailFor("admin"))
      .change.patch({ tenantId: ACME.tenantId, changeSetId: "cs_theirs" })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "NOT_FOUND" });
    expect(String((err as Error).message)).not.toContain("secret diff");
    await expect(
      callerAs(OUTSIDER_EMAIL).change.patch({ tenantId: ACME.tenantId, changeSetId: "cs_stored" }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(
      callerAs(emailFor("viewer")).change.patch({ tenantId: ACME.tenantId, changeSetId: "cs_missing" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("change.contextPacket", () => {
  const packet = (runId: string, projectId: string) => ({
    id: `ctxp_${runId}`,
    purpose: "agent_run" as const,
    projectId,
    runId,
    tree: "t".repeat(40),
    indexSource: "stored" as const,
    note: null,
    items: [
      { id: "ctx_1", path: "src/banner.ts", blob: "b".repeat(40), size: 120, why: "the Task declares it" },
      { id: "ctx_2", path: "README.md", blob: "c".repeat(40), size: 900, why: "the project's README" },
    ],
    omitted: [{ path: "src/huge.json", why: "over the packet's 200,000 bytes" }],
    budget: { maxBytes: 200_000, maxItems: 40, usedBytes: 1020 },
  });

  beforeAll(async () => {
    await recordContextPacket(t.db, packet("run_chg_mine", shop));
    await recordContextPacket(t.db, packet("run_chg_theirs", secret));
    await t.db.agentRun.create({
      data: {
        id: "run_chg_mine_queued",
        taskId: "tsk_chg_mine_a",
        changeId: "chg_mine",
        agentId: "agt_1",
        wakeCommandId: "w_queued",
        reason: "retry",
      },
    });
  });

  it.each(ROLES)("shows a run's packet, as recorded, to a %s", async (role) => {
    const got = await callerAs(emailFor(role)).change.contextPacket({ tenantId: ACME.tenantId, runId: "run_chg_mine" });
    expect(got.changeId).toBe("chg_mine");
    expect(got.packet).toMatchObject({
      id: "ctxp_run_chg_mine",
      items: [
        { id: "ctx_1", path: "src/banner.ts" },
        { id: "ctx_2", path: "README.md" },
      ],
      omitted: [{ path: "src/huge.json" }],
      budget: { usedBytes: 1020 },
    });
  });

  it("answers null for a run that has recorded no packet yet", async () => {
    const got = await callerAs(emailFor("viewer")).change.contextPacket({
      tenantId: ACME.tenantId,
      runId: "run_chg_mine_queued",
    });
    expect(got).toEqual({ runId: "run_chg_mine_queued", changeId: "chg_mine", packet: null });
  });

  it("answers another tenant's run and an unknown run with NOT_FOUND and a non-member with FORBIDDEN", async () => {
    const err = await callerAs(emailFor("admin"))
      .change.contextPacket({ tenantId: ACME.tenantId, runId: "run_chg_theirs" })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "NOT_FOUND" });
    expect(JSON.stringify(err)).not.toContain("src/banner.ts");
    await expect(
      callerAs(emailFor("admin")).change.contextPacket({ tenantId: ACME.tenantId, runId: "run_missing" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      callerAs(OUTSIDER_EMAIL).change.contextPacket({ tenantId: ACME.tenantId, runId: "run_chg_mine" }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
  });
});

describe("task.transcript", () => {
  const steps = [
    { kind: "tool_call", name: "Read", input: '{"file_path":"src/banner.ts"}', at: "2026-12-04T10:00:00Z" },
    { kind: "command", text: "node --test", exitCode: 0, output: "# pass 1" },
    { kind: "usage", inputTokens: 300, outputTokens: 40, costUsd: 0.0021 },
  ];
  const summary = (projectId: string, runId: string) => ({
    key: sourceKeys.agentTranscript(projectId, runId),
    program: "codex",
    version: "0.171.0",
    steps: steps.length,
    inputTokens: 300,
    outputTokens: 40,
    costUsd: 0.0021,
    reached: ["models.example.com:443"],
    refused: [],
  });

  beforeAll(async () => {
    for (const [changeId, projectId] of [
      ["chg_mine", shop],
      ["chg_theirs", secret],
    ] as const) {
      const runId = `run_${changeId}_program`;
      await blobs.put(sourceKeys.agentTranscript(projectId, runId), new TextEncoder().encode(JSON.stringify(steps)));
      await t.db.agentRun.create({
        data: {
          id: runId,
          taskId: `tsk_${changeId}_a`,
          changeId,
          agentId: "agt_1",
          wakeCommandId: `w_${runId}`,
          reason: "dispatch",
          status: "completed",
          transcript: summary(projectId, runId),
        },
      });
    }
    // A run whose summary names a key in another project's folder: never read.
    await t.db.agentRun.create({
      data: {
        id: "run_chg_mine_foreign",
        taskId: "tsk_chg_mine_a",
        changeId: "chg_mine",
        agentId: "agt_1",
        wakeCommandId: "w_foreign",
        reason: "dispatch",
        status: "failed",
        createdAt: new Date("2020-01-01T00:00:00Z"),
        transcript: summary(secret, "run_chg_theirs_program"),
      },
    });
  });

  it.each(ROLES)("shows a Task's runs with their program's steps to a %s", async (role) => {
    const got = await callerAs(emailFor(role)).task.transcript({ tenantId: ACME.tenantId, taskId: "tsk_chg_mine_a" });
    expect(got.taskKey).toBe("a");
    expect(got.runs.map((r) => [r.runId, r.steps?.length ?? null])).toEqual([
      ["run_chg_mine_program", 3],
      ["run_chg_mine_foreign", null],
    ]);
    expect(got.runs[0]?.summary).toMatchObject({
      program: "codex",
      inputTokens: 300,
      reached: ["models.example.com:443"],
    });
    expect(got.runs[0]?.steps?.[1]).toEqual({ kind: "command", text: "node --test", exitCode: 0, output: "# pass 1" });
  });

  it("answers another tenant's Task and an unknown Task with NOT_FOUND", async () => {
    for (const taskId of ["tsk_chg_theirs_a", "tsk_nobody"]) {
      const err = await callerAs(emailFor("admin"))
        .task.transcript({ tenantId: ACME.tenantId, taskId })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "NOT_FOUND" });
    }
  });
});
