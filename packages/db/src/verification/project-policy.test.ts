import { defaultPolicyDocument, loadConfig, type PolicyDocument } from "@rhumbatron/core";
import { pgNotifyNudger } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { seedProjects, seedVerifiedCandidate, useTestDatabase, waitFor } from "../testing/index.ts";
import { withTransaction } from "../transaction.ts";
import {
  activeProjectPolicy,
  activeVerificationPolicy,
  listProjectPolicyVersions,
  updateProjectPolicy,
} from "./project-policy.ts";
import { promoteCandidate } from "./promote.ts";
import { candidateRerunOptions, requestCheckRerun } from "./rerun.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
const deps = { config, nudger: pgNotifyNudger, now: () => new Date() };
const TENANT = "ten_test";
const defaults = defaultPolicyDocument(config);

const edit = (projectId: string, document: unknown, expectedVersion?: number) =>
  updateProjectPolicy(
    t.db,
    {
      tenantId: TENANT,
      projectId,
      actorId: "usr_admin",
      document,
      ...(expectedVersion === undefined ? {} : { expectedVersion }),
    },
    deps,
  );

/** What an edit may write: the policy versions and the outbox. */
const written = async (projectId: string) => ({
  versions: await t.db.projectPolicy.count({ where: { projectId } }),
  events: await t.db.outboxRow.count({ where: { projectId } }),
});

const policyEvents = async (projectId: string) =>
  (await t.db.outboxRow.findMany({ where: { projectId, eventType: "policy.updated" } })).map(
    (r) => r.envelope as { payload: unknown; actor: unknown },
  );

describe("a project's policy", () => {
  it("is version 1, the defaults, for a project that never edited it, and reading it writes nothing", async () => {
    await seedProjects(t.db, ["proj_pol_read"]);
    const active = await activeProjectPolicy(t.db, "proj_pol_read", config);
    expect(active).toMatchObject({ policyId: "policy-1", version: 1, implicit: true, createdBy: null });
    expect(active.document).toEqual(defaults);
    // The defaults leave the checks to the project's checks file: no tier requires more, no override.
    expect(defaults.requiredChecksByRisk.critical).toEqual([]);
    expect(defaults.timeoutSeconds).toEqual({});
    expect(defaults.commands).toEqual({});
    expect(defaults.rerunBudget).toBe(config.checks.rerunsPerCheck);
    expect(await written("proj_pol_read")).toEqual({ versions: 0, events: 0 });
  });

  it("an edit makes version 2 with policy.updated in one transaction; the same document again writes nothing", async () => {
    await seedProjects(t.db, ["proj_pol_edit"]);
    const document = { ...defaults, rerunBudget: 5, timeoutSeconds: { ...defaults.timeoutSeconds, build: 60 } };
    const r = await edit("proj_pol_edit", document, 1);
    expect(r).toMatchObject({ version: 2, previousVersion: 1, changed: true });
    expect(r.changedFields).toEqual(["timeoutSeconds", "rerunBudget"]);
    expect(await policyEvents("proj_pol_edit")).toEqual([
      expect.objectContaining({
        actor: { kind: "user", id: "usr_admin" },
        payload: { policyId: "policy-1", version: 2, previousVersion: 1, changed: ["timeoutSeconds", "rerunBudget"] },
      }),
    ]);
    const active = await activeVerificationPolicy(t.db, "proj_pol_edit", config);
    expect(active).toMatchObject({ id: "policy-1", version: 2, rerunBudget: 5 });
    expect(active.timeoutSeconds?.build).toBe(60);
    const history = await listProjectPolicyVersions(t.db, { tenantId: TENANT, projectId: "proj_pol_edit" }, config);
    expect(history.map((v) => [v.version, v.implicit, v.createdBy])).toEqual([
      [2, false, "usr_admin"],
      [1, true, null],
    ]);

    // The same policy, its lists in another order, is no edit: no version, no Event.
    const reordered = { ...document, humanGateRiskTiers: ["critical", "high"] };
    expect(await edit("proj_pol_edit", reordered)).toMatchObject({ version: 2, changed: false, changedFields: [] });
    expect(await written("proj_pol_edit")).toEqual({ versions: 1, events: 1 });
  });

  it("refuses a bad document with the fields that are wrong, writing nothing", async () => {
    await seedProjects(t.db, ["proj_pol_bad"]);
    const bad = {
      ...defaults,
      requiredChecksByRisk: { ...defaults.requiredChecksByRisk, low: ["Build!"] },
      timeoutSeconds: { ...defaults.timeoutSeconds, build: 0 },
      commands: { build: ["bash", "-c", "make"] },
    };
    const err = await edit("proj_pol_bad", bad).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "INVALID_INPUT" });
    const message = (err as Error).message;
    expect(message).toContain("requiredChecksByRisk.low[0]: a check id is 1 to 40 lower-case letters");
    expect(message).toContain("timeoutSeconds.build:");
    expect(message).toContain('commands.build[0]: command "bash" is not on the sandbox allowlist');
    await expect(edit("proj_pol_bad", { ...defaults, rerunBudget: "2" })).rejects.toThrow(/rerunBudget:/);
    expect(await written("proj_pol_bad")).toEqual({ versions: 0, events: 0 });
  });

  it("two edits from the same version, waiting on the project row together: one lands, the other is CONFLICT", async () => {
    await seedProjects(t.db, ["proj_pol_race"]);
    // Hold the project row until both edits wait for it, so neither can run before the other starts.
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const holder = withTransaction(t.db, async (ctx) => {
      await ctx.tx.$queryRaw`SELECT id FROM projects WHERE id = 'proj_pol_race' FOR UPDATE`;
      await held;
    });
    const edits = [
      edit("proj_pol_race", { ...defaults, rerunBudget: 4 }, 1),
      edit("proj_pol_race", { ...defaults, p95LimitMs: 150 }, 1),
    ].map((p) =>
      p.then(
        (r) => ({ ok: r }),
        (e: unknown) => ({ err: e }),
      ),
    );
    await waitFor("both edits waiting for the project row", async () => {
      const [row] = await t.db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      return (row?.n ?? 0) >= 2;
    });
    release();
    await holder;
    const outcomes = await Promise.all(edits);
    const won = outcomes.flatMap((o) => ("ok" in o ? [o.ok] : []));
    const lost = outcomes.flatMap((o) => ("err" in o ? [o.err] : []));
    expect(won.map((r) => r.version)).toEqual([2]);
    expect(lost).toEqual([
      expect.objectContaining({
        code: "CONFLICT",
        message: "the policy is at version 2, not 1: another edit landed first; reload it and edit again",
      }),
    ]);
    expect(await written("proj_pol_race")).toEqual({ versions: 1, events: 1 });
  });

  it("another tenant's project is NOT_FOUND and an archived project is refused, both writing nothing", async () => {
    await seedProjects(t.db, ["proj_pol_theirs"], "ten_theirs");
    await seedProjects(t.db, ["proj_pol_gone"]);
    await t.db.project.update({ where: { id: "proj_pol_gone" }, data: { status: "archived" } });
    await expect(edit("proj_pol_theirs", { ...defaults, rerunBudget: 1 })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(edit("proj_pol_gone", { ...defaults, rerunBudget: 1 })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
    await expect(
      listProjectPolicyVersions(t.db, { tenantId: TENANT, projectId: "proj_pol_theirs" }, config),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await written("proj_pol_theirs")).toEqual({ versions: 0, events: 0 });
    expect(await written("proj_pol_gone")).toEqual({ versions: 0, events: 0 });
  });
});

const verifiedUnderV1 = (projectId: string, status: "verified" | "rejected" = "verified") =>
  seedVerifiedCandidate(t.db, projectId, config, { status });

const inFork = { commitInCandidateFork: async () => true };
const promote = (candidateId: string, probe = inFork) =>
  promoteCandidate(t.db, { tenantId: TENANT, candidateId, actorId: "usr_approver" }, deps, probe);
const V1_BLOCK = "the plan used policy-1 v1, the active policy is policy-1 v2";

describe("promotion and reruns under the project's policy", () => {
  it("a Candidate planned under v1 is blocked once v2 is active, with a reason naming both versions", async () => {
    const { changeId, candidateId } = await verifiedUnderV1("proj_pol_promote");
    await edit("proj_pol_promote", { ...defaults, rerunBudget: 3 }, 1);
    expect(await promote(candidateId)).toEqual({ outcome: "blocked", blocks: [V1_BLOCK] });
    expect((await t.db.project.findUniqueOrThrow({ where: { id: "proj_pol_promote" } })).canonicalGeneration).toBe(0);
    const blocked = await t.db.outboxRow.findMany({ where: { eventType: "promotion.blocked" } });
    expect(blocked.map((r) => r.envelope as { changeId: string; payload: unknown })).toEqual([
      expect.objectContaining({ changeId, payload: { candidateId, blocks: [V1_BLOCK] } }),
    ]);
  });

  it("the same Candidate promotes while v1 is still the active policy", async () => {
    const { candidateId } = await verifiedUnderV1("proj_pol_v1ok");
    expect(await promote(candidateId)).toMatchObject({ outcome: "promoted", generation: 1 });
  });

  it("an edit that lands after promotion's checks but before its compare-and-swap still blocks it", async () => {
    const { candidateId } = await verifiedUnderV1("proj_pol_cas");
    // The source probe runs in layer 1, after the policy was read there: the edit commits in between.
    const editingProbe = {
      commitInCandidateFork: async () => {
        await edit("proj_pol_cas", { ...defaults, p95LimitMs: 100 }, 1);
        return true;
      },
    };
    expect(await promote(candidateId, editingProbe)).toEqual({ outcome: "blocked", blocks: [V1_BLOCK] });
    expect((await t.db.project.findUniqueOrThrow({ where: { id: "proj_pol_cas" } })).canonicalGeneration).toBe(0);
    expect((await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } })).status).toBe("verified");
  });

  it("reruns: the budget is the active policy's, and a plan under an older version is not rerun", async () => {
    const { candidateId } = await verifiedUnderV1("proj_pol_rerun", "rejected");
    const before = await candidateRerunOptions(t.db, candidateId, config);
    expect(before.map((o) => [o.checkId, o.limit, o.refusal])).toEqual([
      ["build", config.checks.rerunsPerCheck, null],
      ["targeted", config.checks.rerunsPerCheck, null],
    ]);
    const document: PolicyDocument = { ...defaults, rerunBudget: 7 };
    await edit("proj_pol_rerun", document, 1);
    const after = await candidateRerunOptions(t.db, candidateId, config);
    expect(after.map((o) => o.limit)).toEqual([7, 7]);
    const why = `${V1_BLOCK}: promotion would refuse it whatever a rerun shows`;
    expect(after.map((o) => o.refusal)).toEqual([why, why]);
    await expect(
      requestCheckRerun(t.db, { tenantId: TENANT, candidateId, checkId: "build", actorId: "usr_member" }, deps),
    ).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: why });
    expect(await t.db.checkRerun.count({ where: { candidateId } })).toBe(0);
  });
});
