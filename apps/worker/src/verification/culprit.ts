import {
  type Culprit,
  type CulpritProbe,
  culpritText,
  dirForCandidate,
  nextPrefix,
  onlyTests,
  type PlannedCheck,
  type ProjectChecks,
  parseRequirement,
  type SandboxWorkspace,
  type VerificationPlan,
} from "@rhumbatron/core";
import { evidenceOf, recordEvidence, taskTitlesOf, type VerificationOutcome } from "@rhumbatron/db";
import { runCheck } from "./check-step.ts";
import { composePrefix } from "./composition.ts";
import { runSetupStep } from "./project-steps.ts";
import type { SerializedEvidence, VerificationDeps, VerificationRun } from "./verification-run.ts";

/**
 * The culprit Task (docs/flaky-tests.md): a Candidate of several ChangeSets rejected because a
 * command check failed has prefixes of its ChangeSets composed on the same base, each in a
 * directory of its own, and that check run once on each (binary search, core's nextPrefix): the
 * first prefix that fails names the Task whose ChangeSet broke it. When the check's report names
 * failing tests, a probe fails when one of them fails; without a report, when the check does not
 * pass. Every probe is Evidence of its own (`<check>@prefix-<k>`, never judged by the gate), each
 * a step, so a replay tries nothing twice. The project's setup commands and the checks that
 * prepare the tree run in the probe before the check, as in the Candidate's workspace.
 */
export async function culpritStep(
  v: VerificationRun,
  plan: VerificationPlan,
  project: ProjectChecks,
  outcome: VerificationOutcome,
): Promise<VerificationOutcome> {
  const sets = v.input.changeSets;
  // A stacked Candidate is rejected only once the one below it passed (workflow.ts, stackedVerdict):
  // its base, that one's composed tree, passes, and the prefixes are composed on it.
  if (outcome.status !== "rejected" || !outcome.gate || sets.length < 2) return outcome;
  const gap = outcome.gate.gaps.find((g) => g.gap === "failed");
  const check = plan.checks.find(
    (c) => c.id === gap?.checkId && c.procedure !== "browser" && c.procedure !== "playwright",
  );
  if (!gap || !check) return outcome;
  const judged = (await evidenceOf(v.deps.db, v.input.candidate.id)).find((e) => e.id === gap.evidenceId);
  const failing = (judged?.failingTests ?? []).filter((t) => t.failedAttempts >= t.attempts);
  const probes: CulpritProbe[] = [];
  const probe = async (k: number) => {
    const p = await probeStep(v, plan, project, check, failing, k);
    probes.push(p);
    return p.failed;
  };
  let lo = 0;
  let hi = sets.length;
  for (let k = nextPrefix(lo, hi); k !== null; k = nextPrefix(lo, hi)) {
    if (await probe(k)) hi = k;
    else lo = k;
  }
  // Every prefix tried failed: the base itself may fail the check, and then no Task broke it.
  const baseFails = hi === 1 && (await probe(0));
  const cs = sets[hi - 1];
  const titles = cs && !baseFails ? await taskTitlesOf(v.deps.db, v.input.change.id) : [];
  const task = cs ? titles.find((t) => t.key === cs.taskKey) : undefined;
  const culprit: Culprit = {
    checkId: check.id,
    tests: failing.map((t) => t.name),
    task: cs && task ? { id: cs.taskId, key: task.key, title: task.title, changeSetId: cs.id, position: hi } : null,
    of: sets.length,
    probes,
  };
  return { ...outcome, gaps: [...outcome.gaps, culpritText(culprit)], culprit };
}

/** Steps `probe:<k>` and `evidence:<check>@prefix-<k>`: one prefix composed and the check run on it. */
async function probeStep(
  v: VerificationRun,
  plan: VerificationPlan,
  project: ProjectChecks,
  check: PlannedCheck,
  failing: { id: string; name: string }[],
  k: number,
): Promise<CulpritProbe> {
  const tests = failing.map((t) => t.id);
  const names = failing.map((t) => t.name);
  const { deps, input, ids } = v;
  const e = await v.run.step(`probe:${k}`, async () => {
    const ws = await deps.sandbox.open({
      projectId: input.project.id,
      dirName: `${dirForCandidate(input.candidate.id)}-prefix-${k}`,
    });
    try {
      await composePrefix(deps, input, ws.path, k);
      // The project's setup as the Candidate's ran it: from the setup cache, or with its registries.
      const tools = (project.file.requires ?? []).flatMap((r) => parseRequirement(r)?.tool ?? []);
      const setup: string[] = [];
      for (const step of project.file.setup ?? []) {
        const set = await runSetupStep(deps, input, ws, { project, step, tools }, `.p${k}`);
        if (set.status !== "pass") return { ...set, id: `${set.id}_p${k}`, detail: `setup ${step.id}: ${set.detail}` };
        setup.push(`setup ${step.id} ${set.metrics.cacheHit === 1 ? "from the setup cache" : "ran"}`);
      }
      // One run each: a probe asks whether the failing tests fail, not whether they are flaky.
      const once = {
        ...deps,
        config: { ...deps.config, tests: { ...deps.config.tests, failingAttempts: 1, newTestAttempts: 1 } },
      };
      for (const before of plan.checks.filter((c) => c.prepares && c.id !== check.id)) {
        await runCheck(once, input, ws, before, deps.now(), `p${k}`);
      }
      const e = await runProbe(once, input, ws, { check, only: onlyCommand(project, check, names) }, tests, k);
      return { ...e, detail: [...setup, e.detail].join("; ") };
    } finally {
      await ws.remove().catch(() => {});
    }
  });
  const failed = probeFailed(e, tests);
  const record: SerializedEvidence = {
    ...e,
    checkId: `${check.id}@prefix-${k}`,
    detail: `${k === 0 ? "the base alone" : `the first ${k} of ${input.changeSets.length} ChangeSets`}: ${failed ? "fails" : "passes"} (${e.detail})`,
  };
  await v.run.txStep(`evidence:${record.checkId}`, (ctx) =>
    recordEvidence(ctx, ids, { ...record, probe: true, completedAt: new Date(record.completedAt) }, deps),
  );
  return { prefix: k, evidenceId: record.id, failed };
}

/**
 * The failing check on one prefix: with the checks file's `only` command, just the failing tests;
 * when that run's report shows none of them run (a pattern the runner reads otherwise), the whole
 * check, so a selection that missed never passes for them.
 */
async function runProbe(
  deps: VerificationDeps,
  input: VerificationRun["input"],
  ws: SandboxWorkspace,
  c: { check: PlannedCheck; only: string[] | null },
  tests: string[],
  k: number,
): Promise<SerializedEvidence> {
  if (c.only) {
    const e = await runCheck(deps, input, ws, { ...c.check, argv: c.only }, deps.now(), `p${k}`);
    const ran = ((e.tests ?? []) as { id: string; status: string }[]).filter(
      (t) => tests.includes(t.id) && t.status !== "skipped",
    );
    if (ran.length > 0) return { ...e, detail: `only the ${tests.length} failing test(s) run; ${e.detail}` };
  }
  return runCheck(deps, input, ws, c.check, deps.now(), `p${k}`);
}

/**
 * The declared `only` command, for the tests by name; null without one, without failing tests, or
 * when the policy runs another command for this check than the file's.
 */
function onlyCommand(project: ProjectChecks, check: PlannedCheck, names: string[]): string[] | null {
  const declared = project.file.checks.find((c) => c.id === check.id);
  if (!declared?.only || names.length === 0) return null;
  const fileCommand = check.related || JSON.stringify(check.argv) === JSON.stringify(declared.run);
  return fileCommand ? onlyTests(declared.only, names) : null;
}

/**
 * Whether the probe failed as the Candidate did: one of its failing tests failed; or, when none of
 * them ran (no report, a setup step that failed, a crash before the tests), the check did not pass.
 */
function probeFailed(e: SerializedEvidence, tests: string[]): boolean {
  const ran = ((e.tests ?? []) as { id: string; status: string }[]).filter(
    (t) => tests.includes(t.id) && t.status !== "skipped",
  );
  if (ran.length === 0) return e.status !== "pass";
  return ran.some((t) => t.status === "failed");
}
