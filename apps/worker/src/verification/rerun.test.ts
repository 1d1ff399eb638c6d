import { candidateFork, DomainError, RETRY_TASKS_HINT, type Sandbox, type SandboxWorkspace } from "@rhumbatron/core";
import { candidateRerunOptions, evidenceOf, requestCheckRerun } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import {
  candidateFor,
  fastChecksPolicy,
  junitCommand,
  provisionedProject,
  type TestWorld,
  testWorld,
  verificationDeps,
} from "../test-world.ts";
import { drainVerifications } from "./runner.ts";
import type { VerificationDeps } from "./verification-run.ts";

const t = useTestDatabase();

const FAILING = junitCommand(0, 1);
const banner = {
  key: "a",
  editPlan: [{ op: "write" as const, path: "src/banner.ts", content: "export const banner = 'Hi';\n" }],
};

/**
 * A Sandbox whose first run of `argv` loses its process, as a Sandbox that died under the check
 * would: the check ends in error for a reason that has nothing to do with the code.
 */
function losesFirstRunOf(sandbox: Sandbox, argv: string[]): Sandbox {
  let lost = false;
  const wrapped: Sandbox = Object.create(sandbox);
  wrapped.open = async (runDir) => {
    const ws = await sandbox.open(runDir);
    const flaky: SandboxWorkspace = Object.create(ws);
    flaky.run = async (cmd) => {
      if (!lost && cmd.argv.join(" ") === argv.join(" ")) {
        lost = true;
        throw new DomainError("UNAVAILABLE", "the Sandbox lost the check's process (injected)");
      }
      return ws.run(cmd);
    };
    return flaky;
  };
  return wrapped;
}

function verifier(w: TestWorld, sandbox: Sandbox = w.sandbox, policy = fastChecksPolicy()): VerificationDeps {
  return verificationDeps(w, { sandbox, policy });
}

const member = { tenantId: "ten_a", actorId: "usr_member" };
const eventCount = (changeId: string, type: string) =>
  t.db.outboxRow.count({ where: { eventType: type, envelope: { path: ["changeId"], equals: changeId } } });

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(err)}`);
  return { code: err.code, message: err.message };
}

describe("rerun one check of a Candidate", () => {
  it("reruns a check that errored: new Evidence beside the old, the gate reads the latest, the Candidate is verified", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const { changeId, candidateId } = await candidateFor(w, projectId, { requestId: "flaky", tasks: [banner] });
    const targeted = fastChecksPolicy().commands?.targeted ?? [];
    const [first] = await drainVerifications(verifier(w, losesFirstRunOf(w.sandbox, targeted)));
    expect(first?.outcome).toBe("rejected");
    const before = await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } });
    expect(await t.db.evidence.findFirst({ where: { candidateId, checkId: "targeted" } })).toMatchObject({
      status: "error",
      coverage: "not_checked",
    });

    // Only the errored check is offered; the passing one says why not.
    const options = await candidateRerunOptions(t.db, candidateId, w.config);
    expect(options.find((o) => o.checkId === "targeted")).toMatchObject({ refusal: null, used: 0, limit: 2 });
    expect(options.find((o) => o.checkId === "build")?.refusal).toContain("only a check that ended in error or fail");

    const r = await requestCheckRerun(t.db, { ...member, candidateId, checkId: "targeted" }, w.deps);
    expect(r).toMatchObject({ candidateId, checkId: "targeted", rerun: 1, remaining: 1 });
    expect((await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } })).status).toBe("verifying");
    expect(await eventCount(changeId, "check.rerun_requested")).toBe(1);
    // While it runs, a second request is refused and writes nothing.
    expect(await refusal(requestCheckRerun(t.db, { ...member, candidateId, checkId: "targeted" }, w.deps))).toEqual({
      code: "PRECONDITION_FAILED",
      message: "the Candidate's verification is still running; wait for it to finish",
    });
    expect(await t.db.checkRerun.count({ where: { candidateId } })).toBe(1);

    // The Candidate's fork was swept meanwhile: the rerun composes it again, to the same commit.
    await w.store.delete(candidateFork(candidateId));
    const [rerun] = await drainVerifications(verifier(w));
    expect(rerun).toMatchObject({ candidateId, outcome: "verified" });

    const after = await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } });
    expect(after).toMatchObject({ status: "verified", composedCommit: before.composedCommit, rejectionReason: null });
    const records = (await evidenceOf(t.db, candidateId)).filter((e) => e.checkId === "targeted");
    expect(records.map((e) => [e.id.endsWith("_r1"), e.status])).toEqual([
      [false, "error"],
      [true, "pass"],
    ]);
    const verdict = (after.gate as { verdicts: { checkId: string; evidenceId: string }[] }).verdicts.find(
      (v) => v.checkId === "targeted",
    );
    expect(verdict?.evidenceId).toBe(records[1]?.id);
    expect(await w.blobs.has(records[1]?.outputKey ?? "")).toBe(true);
    expect(records[1]?.outputKey).not.toBe(records[0]?.outputKey);
    expect(await eventCount(changeId, "candidate.verified")).toBe(1);
    expect(await t.db.checkRerun.findUniqueOrThrow({ where: { id: r.rerunId } })).toMatchObject({
      outcome: "verified",
    });
    expect(await t.db.usageCounter.count({ where: { counter: "sandbox_reservation" } })).toBe(0);
    // A verified Candidate has nothing to rerun; the runner has nothing left either.
    expect(
      (await refusal(requestCheckRerun(t.db, { ...member, candidateId, checkId: "targeted" }, w.deps))).message,
    ).toBe("the Candidate is verified; only a rejected Candidate's checks can be rerun");
    expect(await drainVerifications(verifier(w))).toEqual([]);
  }, 240_000);

  it("a check that keeps failing uses its reruns, then is refused; bad requests are typed and write nothing", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const { changeId, candidateId } = await candidateFor(w, projectId, { requestId: "failing", tasks: [banner] });
    const policy = fastChecksPolicy({ commands: { ...fastChecksPolicy().commands, targeted: FAILING } });
    expect((await drainVerifications(verifier(w, w.sandbox, policy)))[0]?.outcome).toBe("rejected");

    const written = async () => ({
      reruns: await t.db.checkRerun.count({ where: { candidateId } }),
      events: await t.db.outboxRow.count(),
      status: (await t.db.candidate.findUniqueOrThrow({ where: { id: candidateId } })).status,
    });
    const start = await written();
    const ask = (over: Partial<Parameters<typeof requestCheckRerun>[1]> = {}) =>
      refusal(requestCheckRerun(t.db, { ...member, candidateId, checkId: "targeted", ...over }, w.deps));
    expect(await ask({ tenantId: "ten_other" })).toEqual({
      code: "NOT_FOUND",
      message: `candidate ${candidateId} not found`,
    });
    expect(await ask({ candidateId: "cand_nope" })).toMatchObject({ code: "NOT_FOUND" });
    expect(await ask({ checkId: "fuzz" })).toEqual({
      code: "INVALID_INPUT",
      message: expect.stringMatching(/^the Candidate's plan has no check fuzz; its checks are .*targeted/),
    });
    expect(await ask({ checkId: "build" })).toMatchObject({
      code: "PRECONDITION_FAILED",
      message: "check build ended pass; only a check that ended in error or fail can be rerun",
    });
    expect(await written()).toEqual(start);

    for (const n of [1, 2]) {
      const r = await requestCheckRerun(t.db, { ...member, candidateId, checkId: "targeted" }, w.deps);
      expect(r).toMatchObject({ rerun: n, remaining: 2 - n });
      expect((await drainVerifications(verifier(w, w.sandbox, policy)))[0]?.outcome).toBe("rejected");
    }
    expect(await ask()).toEqual({
      code: "PRECONDITION_FAILED",
      message: "check targeted has been rerun 2 of 2 times on this Candidate; no reruns are left",
    });
    // Three verdicts, three rejections with their own Event IDs; all three records kept.
    expect(await eventCount(changeId, "candidate.rejected")).toBe(3);
    expect(await t.db.evidence.count({ where: { candidateId, checkId: "targeted" } })).toBe(3);

    // A Candidate whose base is no longer canonical cannot land whatever a rerun shows: retry its Tasks.
    await t.db.checkRerun.deleteMany({ where: { candidateId } });
    await t.db.project.update({ where: { id: projectId }, data: { canonicalGeneration: { increment: 1 } } });
    expect((await ask()).message).toBe(
      `the Candidate's base is no longer the canonical generation, so a rerun would check a tree that cannot land; ${RETRY_TASKS_HINT}`,
    );
  }, 240_000);
});
