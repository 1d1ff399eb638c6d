import { type ContextItem, candidateFork, conflictReviewIds, parseSettings } from "@rhumbatron/core";
import { getCandidate, promoteCandidate, recordConflictReview, type SourceProbe, withRepoToken } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { withTransaction } from "@rhumbatron/runtime";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openAiConflictReviewer } from "../agents/conflict-reviewer.ts";
import { type FakeModel, say, startFakeModel } from "../agents/fake-model.ts";
import { conflictReviewerFromSettings } from "../agents/provider-from-settings.ts";
import {
  candidateFor,
  fastChecksPolicy,
  provisionedProject,
  type TestWorld,
  testWorld,
  verificationDeps,
} from "../test-world.ts";
import { drainVerifications } from "./runner.ts";
import type { VerificationDeps } from "./verification-run.ts";

/**
 * Conflict reviews in the verification workflow: real Postgres, real git, the real Sandbox running
 * fast checks, and a local chat-completions server standing in for the model.
 */
const t = useTestDatabase();
let model: FakeModel;
beforeAll(async () => {
  model = await startFakeModel();
});
afterAll(() => model.close());
beforeEach(() => model.reset());

const reviewer = () => openAiConflictReviewer({ baseUrl: model.baseUrl, model: "reviewer-test", timeoutMs: 10_000 });

function verifier(w: TestWorld, withReviewer: VerificationDeps["reviewer"] | null = reviewer()): VerificationDeps {
  return verificationDeps(w, { policy: fastChecksPolicy(), ...(withReviewer ? { reviewer: withReviewer } : {}) });
}

const probe = (w: TestWorld): SourceProbe => ({
  commitInCandidateFork: (candidateId, commit) => {
    const fork = candidateFork(candidateId);
    return withRepoToken(
      t.db,
      { repo: fork, mode: "read", purpose: "probe" },
      w.config,
      () => new Date(),
      (tok) => w.store.hasCommit(fork, tok, commit),
    );
  },
});

/** Two Tasks that do not depend on each other edit different lines of src/catalog.ts: it merges, they overlap. */
const rename = (key: string, find: string, replace: string) => ({
  key,
  editPlan: [{ op: "replace" as const, path: "src/catalog.ts", find, replace }],
});
const overlapping = [rename("a", "Rhumbatron Mug", "Rhumbatron Cup"), rename("b", "Sticker Pack", "Sticker Set")];

async function overlappingCandidate(w: TestWorld, requestId: string) {
  const projectId = await provisionedProject(w);
  return { projectId, ...(await candidateFor(w, projectId, { requestId, tasks: overlapping })) };
}

const answer = (findings: unknown[]) => say(JSON.stringify({ findings }));
const promote = (w: TestWorld, candidateId: string) =>
  promoteCandidate(t.db, { tenantId: "ten_a", candidateId, actorId: "usr_approver" }, w.deps, probe(w));
/** The conflict_review.recorded Events of the Change, their payloads. */
const reviewEvents = async (changeId: string) =>
  (
    await t.db.outboxRow.findMany({
      where: { eventType: "conflict_review.recorded", envelope: { path: ["changeId"], equals: changeId } },
    })
  ).map((r) => (r.envelope as { payload: unknown }).payload);
const packetOf = async (candidateId: string) =>
  (await t.db.contextPacket.findUniqueOrThrow({ where: { id: conflictReviewIds(candidateId).packet } }))
    .items as unknown as ContextItem[];

describe("the conflict review of a Candidate whose Tasks changed the same file", () => {
  it("asks over a Context Packet of the base, each Task's and the composed version; a supported blocking finding blocks promotion", async () => {
    const w = await testWorld(t.db);
    const { changeId, candidateId } = await overlappingCandidate(w, "blocking");
    model.script = [
      answer([
        { severity: "blocking", message: "both Tasks rename products the tests pin", citations: ["ctx_2", "ctx_3"] },
        { severity: "advisory", message: "the base names both products", citations: ["ctx_1"] },
      ]),
    ];
    const [r] = await drainVerifications(verifier(w));
    expect(r).toMatchObject({ candidateId, outcome: "rejected", detail: "1 blocking conflict-review finding" });

    // The packet: every version of the overlapping file, each with its blob, recorded.
    const items = await packetOf(candidateId);
    expect(items.map((i) => [i.id, i.path, i.why])).toEqual([
      ["ctx_1", "src/catalog.ts", "the base (generation 0)"],
      ["ctx_2", "src/catalog.ts", expect.stringMatching(/^Task a's version \(cs_/)],
      ["ctx_3", "src/catalog.ts", expect.stringMatching(/^Task b's version \(cs_/)],
      ["ctx_4", "src/catalog.ts", "the composed version"],
    ]);
    // The model was asked once, over exactly those items, each with its text.
    expect(model.recorded).toHaveLength(1);
    const body = model.recorded[0]?.body;
    expect(body).toMatchObject({ model: "reviewer-test", temperature: 0, response_format: { type: "json_object" } });
    const user = body?.messages[1]?.content ?? "";
    for (const i of items) expect(user).toContain(`=== ${i.id} "src/catalog.ts": ${i.why} (blob ${i.blob}`);
    expect(user.split("=== ctx_2")[1]?.split("=== ctx_3")[0]).toContain("Rhumbatron Cup");
    expect(user.split("=== ctx_4")[1]).toContain("Sticker Set");

    // Both findings recorded as supported, with their Event.
    const findings = await t.db.conflictReviewFinding.findMany({ where: { candidateId }, orderBy: { n: "asc" } });
    expect(findings.map((f) => [f.severity, f.supported, f.citations])).toEqual([
      ["blocking", true, ["ctx_2", "ctx_3"]],
      ["advisory", true, ["ctx_1"]],
    ]);
    const [event] = await reviewEvents(changeId);
    expect(event).toMatchObject({
      status: "completed",
      findings: [
        { severity: "blocking", supported: true },
        { severity: "advisory", supported: true },
      ],
    });

    // The gate's gap, the block promotion reports, and the view the page and the CLI show.
    const block =
      "gap blocking_finding on conflict-review: both Tasks rename products the tests pin (cites ctx_2, ctx_3)";
    expect(await promote(w, candidateId)).toEqual({
      outcome: "blocked",
      blocks: ["the Candidate is rejected, not verified", block],
    });
    const view = await getCandidate(t.db, { tenantId: "ten_a", candidateId }, w.config);
    expect(view.gaps).toEqual([expect.objectContaining({ checkId: "conflict-review", gap: "blocking_finding" })]);
    expect(view.conflictReview?.findings.map((f) => [f.severity, f.supported, f.blocks])).toEqual([
      ["blocking", true, true],
      ["advisory", true, false],
    ]);
    expect(view.conflictReview?.findings[0]?.citations[0]).toEqual({
      id: "ctx_2",
      found: true,
      path: "src/catalog.ts",
      why: items[1]?.why,
    });
  });

  it("records a finding with a bad citation as unsupported, and it changes nothing: the Candidate is promoted", async () => {
    const w = await testWorld(t.db);
    const { candidateId } = await overlappingCandidate(w, "unsupported");
    model.script = [answer([{ severity: "blocking", message: "a made-up conflict", citations: ["ctx_2", "ctx_99"] }])];
    const [r] = await drainVerifications(verifier(w));
    expect(r).toMatchObject({ candidateId, outcome: "verified" });
    const [finding] = await t.db.conflictReviewFinding.findMany({ where: { candidateId } });
    expect(finding).toMatchObject({ severity: "blocking", supported: false, citations: ["ctx_2", "ctx_99"] });
    const view = await getCandidate(t.db, { tenantId: "ten_a", candidateId }, w.config);
    expect(view.gaps).toEqual([]);
    expect(view.conflictReview?.findings[0]?.citations.map((c) => c.found)).toEqual([true, false]);
    expect(await promote(w, candidateId)).toMatchObject({ outcome: "promoted", generation: 1 });
  });

  it("writes nothing twice: a replayed workflow asks no model again, and a second record of the Candidate's review is refused", async () => {
    const w = await testWorld(t.db);
    const { changeId, candidateId } = await overlappingCandidate(w, "retry");
    model.script = [answer([{ severity: "advisory", message: "look twice", citations: ["ctx_1"] }])];
    expect((await drainVerifications(verifier(w)))[0]?.outcome).toBe("verified");

    // The instance runs again from the start without its stored steps (as after a lost step table).
    await t.db.workflowStep.deleteMany({ where: { instanceId: candidateId } });
    await t.db.workflowInstance.update({
      where: { instanceId: candidateId },
      data: { status: "running", leasedUntil: null, finishedAt: null },
    });
    await t.db.candidate.update({ where: { id: candidateId }, data: { status: "created" } });
    model.script = [answer([{ severity: "blocking", message: "a different answer", citations: ["ctx_1"] }])];
    expect((await drainVerifications(verifier(w)))[0]?.outcome).toBe("verified");
    expect(model.recorded).toHaveLength(1);

    // Two runners that both asked: the second record finds the first review and writes nothing.
    const again = await withTransaction(t.db, (ctx) =>
      recordConflictReview(
        ctx,
        {
          candidateId,
          changeId,
          packetId: conflictReviewIds(candidateId).packet,
          status: "completed",
          model: "reviewer-test",
          reason: null,
          findings: [{ severity: "blocking", message: "late", citations: ["ctx_1"], supported: true }],
        },
        w.deps,
      ),
    );
    expect(again).toBe(false);
    const findings = await t.db.conflictReviewFinding.findMany({ where: { candidateId } });
    expect(findings.map((f) => f.message)).toEqual(["look twice"]);
    expect(await t.db.conflictReview.count({ where: { candidateId } })).toBe(1);
    expect(await reviewEvents(changeId)).toHaveLength(1);
  });

  it("records a malformed answer as a failed review with the reason, and verification goes on", async () => {
    const w = await testWorld(t.db);
    const { changeId, candidateId } = await overlappingCandidate(w, "malformed");
    model.script = [say('{"findings":[{"severity":"critical","message":"x","citations":["ctx_1"]}],"ok":false}')];
    const [r] = await drainVerifications(verifier(w));
    expect(r).toMatchObject({ candidateId, outcome: "verified" });
    const review = await t.db.conflictReview.findUniqueOrThrow({ where: { candidateId } });
    expect(review).toMatchObject({ status: "failed", model: "reviewer-test" });
    expect(review.reason).toBe(
      'answer does not have the findings shape: findings.0.severity: Invalid option: expected one of "blocking"|"advisory"; (answer): Unrecognized key: "ok"',
    );
    expect(await t.db.conflictReviewFinding.count({ where: { candidateId } })).toBe(0);
    const [event] = await reviewEvents(changeId);
    expect(event).toMatchObject({ status: "failed", findings: [] });
  });

  it("with no model configured (the default settings), records the review as skipped and why, and blocks nothing", async () => {
    const w = await testWorld(t.db);
    const { candidateId } = await overlappingCandidate(w, "no-model");
    const [r] = await drainVerifications(verifier(w, conflictReviewerFromSettings(parseSettings({}))));
    expect(r).toMatchObject({ candidateId, outcome: "verified" });
    expect(await t.db.conflictReview.findUniqueOrThrow({ where: { candidateId } })).toMatchObject({
      status: "skipped",
      model: null,
      reason: "no model is configured for conflict reviews (set AGENT_MODEL_URL and AGENT_MODEL_MODEL)",
    });
    expect(model.recorded).toHaveLength(0);
    expect(await promote(w, candidateId)).toMatchObject({ outcome: "promoted" });
  });

  it("asks nothing and records nothing when no two Tasks changed the same file", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const { candidateId } = await candidateFor(w, projectId, {
      requestId: "disjoint",
      tasks: [
        rename("a", "Rhumbatron Mug", "Rhumbatron Cup"),
        {
          key: "b",
          editPlan: [{ op: "write", path: "src/banner.ts", content: "export const banner = 'Hi';\n" }],
        },
      ],
    });
    expect((await drainVerifications(verifier(w)))[0]?.outcome).toBe("verified");
    expect(model.recorded).toHaveLength(0);
    expect(await t.db.conflictReview.count({ where: { candidateId } })).toBe(0);
  });
});
