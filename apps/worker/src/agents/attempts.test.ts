import { type AgentChoice, landingState } from "@rhumbatron/core";
import { landingInput, listAttempts, pickAttempt, promoteCandidate } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { stoppedAfterEach } from "../test-hooks.ts";
import {
  createScriptedChange,
  explainOnFailure,
  WHOLE_WORKER_LIMIT as LIMIT,
  type TestWorld,
  waitForPromoted,
  waitUntil,
  wholeWorkerWithProject,
} from "../test-world.ts";
import { storeSourceProbe } from "../verification/landing.ts";

/**
 * Attempts side by side (docs/attempts.md) on the whole worker (real Postgres, git, Sandbox):
 * a Task asks for two attempts, the scripted Agent and a command Agent that writes the file its own
 * way; each attempt is its own run, ChangeSet and Candidate, verified with its own Evidence; nothing
 * lands until one is picked, by a person or by the Task's rule, and then exactly that one lands.
 */
const t = useTestDatabase();
const running = stoppedAfterEach();

const PATH = "notes/attempt.md";
const scripted: AgentChoice = { kind: "scripted" };
/** A command Agent whose edit is three lines where the scripted one writes one. */
const longer: AgentChoice = {
  kind: "command",
  argv: ["sh", "-c", `mkdir -p notes && printf 'by the command\\nsecond line\\nthird line\\n' > ${PATH}`],
  timeoutSeconds: 60,
  allowOutsidePaths: false,
  secrets: [],
};

function attemptedChange(w: TestWorld, projectId: string, requestId: string, pick: "person" | "fewest_lines") {
  return createScriptedChange(w, projectId, {
    requestId,
    title: `Two attempts, ${pick}`,
    landWhenReady: true,
    tasks: [
      {
        key: "a",
        paths: [PATH],
        editPlan: [{ op: "write", path: PATH, content: "by the script\n" }],
        attempts: { agents: [scripted, longer], pick },
      },
    ],
  });
}

/** Each attempt's newest Candidate's status, by attempt. */
async function candidatesByAttempt(changeId: string) {
  const rows = await t.db.candidate.findMany({ where: { changeId }, orderBy: { createdAt: "asc" } });
  return Object.fromEntries(rows.map((c) => [c.alternative, c.status]));
}

/** What landed: the promoted Candidate's attempt and its ChangeSet's stored patch. */
async function promotedContent(w: TestWorld, changeId: string): Promise<{ alternative: number; text: string }> {
  const c = await t.db.candidate.findFirstOrThrow({ where: { changeId, status: "promoted" } });
  const cs = await t.db.changeSet.findFirstOrThrow({ where: { id: { in: c.changeSetIds } } });
  const patch = new TextDecoder().decode((await w.blobs.get(cs.patchRef ?? ""))?.body);
  return { alternative: c.alternative, text: patch };
}

describe("attempts side by side", () => {
  it(
    "each attempt is its own run, ChangeSet and verified Candidate; nothing lands before a person picks, then the picked one lands",
    async () => {
      const { w, projectId } = await wholeWorkerWithProject(t.db, t.url, running);
      explainOnFailure(w, projectId);
      const changeId = await attemptedChange(w, projectId, "attempts-person", "person");
      await waitUntil(
        "both attempts verified",
        () => candidatesByAttempt(changeId),
        (s) => s[1] === "verified" && s[2] === "verified",
        LIMIT,
      );
      const view = await listAttempts(t.db, { tenantId: "ten_a", changeId });
      expect(view).toMatchObject({ taskKey: "a", rule: "person", picked: null });
      expect(view?.attempts.map((a) => [a.attempt, a.agent, a.run?.status, a.changeSet?.changedLines])).toEqual([
        [1, "scripted", "completed", 1],
        [2, expect.stringContaining("command"), "completed", 3],
      ]);
      for (const a of view?.attempts ?? []) expect(a.candidate).toMatchObject({ status: "verified", failed: 0 });
      expect(view?.attempts[0]?.candidate?.passed).toBeGreaterThan(0);
      // Two runs of one Task, two ChangeSets, two Candidates with Evidence of their own.
      const sets = await t.db.changeSet.findMany({ where: { changeId }, orderBy: { alternative: "asc" } });
      expect(sets.map((s) => s.alternative)).toEqual([1, 2]);
      const evidence = await t.db.evidence.groupBy({ by: ["candidateId"], where: { candidate: { changeId } } });
      expect(evidence).toHaveLength(2);

      // Nothing lands before a pick: the queue says so, and promotion refuses.
      const state = landingState(await landingInput(t.db, changeId));
      expect(state).toMatchObject({ ready: false, waitingFor: "attempt_pick" });
      const second = await t.db.candidate.findFirstOrThrow({ where: { changeId, alternative: 2 } });
      const refused = await promoteCandidate(
        t.db,
        { tenantId: "ten_a", candidateId: second.id, actorId: "usr_test" },
        w.deps,
        storeSourceProbe(w.deps),
      );
      expect(refused).toMatchObject({ outcome: "blocked", blocks: [expect.stringContaining("none is picked yet")] });
      expect((await t.db.change.findUniqueOrThrow({ where: { id: changeId } })).status).toBe("verifying");

      // A bad pick changes nothing.
      await expect(
        pickAttempt(t.db, { tenantId: "ten_a", changeId, attempt: 3, actorId: "usr_test" }, w.deps),
      ).rejects.toMatchObject({ code: "INVALID_INPUT" });
      expect((await t.db.change.findUniqueOrThrow({ where: { id: changeId } })).pickedAttempt).toBeNull();

      const picked = await pickAttempt(t.db, { tenantId: "ten_a", changeId, attempt: 2, actorId: "usr_test" }, w.deps);
      const first = await t.db.candidate.findFirstOrThrow({ where: { changeId, alternative: 1 } });
      expect(picked).toEqual({ picked: 2, cancelled: [first.id] });
      await waitForPromoted(w, [changeId]);
      const landed = await promotedContent(w, changeId);
      expect(landed.alternative).toBe(2);
      expect(landed.text).toContain("+by the command");
      expect((await t.db.candidate.findUniqueOrThrow({ where: { id: first.id } })).status).toBe("cancelled");
      const events = await t.db.outboxRow.findMany({
        where: { projectId, eventType: { in: ["attempt.finished", "attempt.picked"] } },
        orderBy: { id: "asc" },
      });
      expect(events.map((e) => e.eventType)).toEqual(["attempt.finished", "attempt.picked"]);
    },
    LIMIT,
  );

  it(
    "with the rule fewest_lines, the attempt that changes fewer lines is picked once both have results, and lands with no human action",
    async () => {
      const { w, projectId } = await wholeWorkerWithProject(t.db, t.url, running);
      explainOnFailure(w, projectId);
      const changeId = await attemptedChange(w, projectId, "attempts-rule", "fewest_lines");
      await waitForPromoted(w, [changeId]);
      const landed = await promotedContent(w, changeId);
      expect(landed.alternative).toBe(1);
      expect(landed.text).toContain("+by the script");
      const change = await t.db.change.findUniqueOrThrow({ where: { id: changeId } });
      expect(change.pickedAttempt).toBe(1);
      const pickedEvent = await t.db.outboxRow.findFirstOrThrow({ where: { projectId, eventType: "attempt.picked" } });
      expect((pickedEvent.envelope as { payload: { rule: string } }).payload.rule).toBe("fewest_lines");
      expect(await candidatesByAttempt(changeId)).toMatchObject({ 1: "promoted", 2: "cancelled" });
    },
    LIMIT,
  );
});
