import { createHash } from "node:crypto";
import {
  type PlannedCheck,
  type ProjectChecks,
  parseRequirement,
  type SandboxWorkspace,
  type VerificationPlan,
} from "@rhumbatron/core";
import { type ReusableEvidence, recordEvidence, reusableEvidence } from "@rhumbatron/db";
import type { VerificationRun } from "./verification-run.ts";

/**
 * Reused Evidence (docs/checks-file.md, Reused Evidence). A check whose inputs are byte-identical to a pass
 * recorded by another Candidate of the same project gets a new Evidence row copying that pass,
 * saying so and naming it, instead of running again. Its inputs, hashed into one `inputsKey`:
 * - the composed tree (its git tree hash) the check runs on;
 * - the check as planned (argv, timeout, report, metric, related files, procedure and steps), and
 *   for every check that does not prepare, the preparing checks as planned (it starts from the tree
 *   they leave: check-pool.ts);
 * - the project's checks (its parsed checks file or the detected ones, with its setup steps; a
 *   setup step's cache key is its key files, which are in the tree, its command and the toolchain,
 *   so this holds the setup that ran or was restored);
 * - the toolchain's versions (`<tool> --version` of node and every tool the file requires);
 * - for the contract check, which also runs on the base, the base commit and the Change's declared
 *   contract changes.
 * Only a pass with full coverage is reused: a failure, an error, a skip and a pass without signal
 * always run again (a flaky failure can clear). A rerun (rerun.ts) always runs.
 *
 * The rule for checks that prepare the tree (`prepares: true`, a build): the others start from the
 * tree it leaves, and a reused check leaves no tree. So a preparing check is reused only when every
 * other check of the run is reused too; as soon as one must run, every preparing check runs for real
 * and its Evidence says it ran (never "reused" for a check whose output was then needed). Checks
 * that do not prepare are independent by the check pool's design (each starts from its own copy of
 * the prepared tree), so each is reused on its own; with `checks.concurrency` 1 they share one
 * workspace, and a later check then no longer sees what a reused one would have left there.
 */

/** What the `reuse` step decided for one verification: each check's key, and the pass each reuses. */
export interface ReusePlan {
  keys: Record<string, string>;
  reuse: Record<string, ReusableEvidence>;
}

export interface ReuseInputs {
  tree: string;
  project: ProjectChecks;
  toolchain: Record<string, string>;
  baseCommit: string;
  contractChanges: unknown;
}

/** JSON with every object's keys sorted, so one value has one text whatever order it was built in. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

/** One check's inputs key (sha256, hex). Pure: the same inputs always give the same key. */
export function inputsKeyOf(check: PlannedCheck, plan: readonly PlannedCheck[], i: ReuseInputs): string {
  const prepared = check.prepares ? [] : plan.filter((c) => c.prepares);
  const value = {
    v: 1,
    tree: i.tree,
    check,
    prepared,
    checks: { kind: i.project.source.kind, file: i.project.file },
    toolchain: i.toolchain,
    ...(check.procedure === "contract" ? { base: i.baseCommit, contractChanges: i.contractChanges } : {}),
  };
  return createHash("sha256").update(canonicalJson(value)).digest("hex");
}

/**
 * Which checks reuse which pass, by the rule above: the non-preparing checks each on their own; the
 * preparing ones only when every non-preparing check is reused. Checks already recorded are left out.
 */
export function decideReuse(
  checks: readonly PlannedCheck[],
  found: Record<string, ReusableEvidence | null>,
): Record<string, ReusableEvidence> {
  const out: Record<string, ReusableEvidence> = {};
  const rest = checks.filter((c) => !c.prepares);
  const allRestReused = rest.every((c) => found[c.id]);
  for (const c of checks) {
    const hit = found[c.id];
    if (!hit) continue;
    if (c.prepares && !allRestReused) continue;
    out[c.id] = hit;
  }
  return out;
}

/** The versions of the tools the checks may run, as the Candidate's Sandbox reports them. */
async function toolchainOf(ws: SandboxWorkspace, plan: VerificationPlan): Promise<Record<string, string>> {
  const tools = new Set(["node", ...(plan.requires ?? []).flatMap((r) => parseRequirement(r)?.tool ?? [])]);
  const out: Record<string, string> = {};
  for (const tool of [...tools].sort()) {
    const r = await ws.run({ argv: [tool, "--version"], allow: [tool], timeoutMs: 30_000 }).catch(() => null);
    out[tool] = r && r.exitCode === 0 ? `${r.stdout}${r.stderr}`.trim() : "unavailable";
  }
  return out;
}

/**
 * Step `reuse`: every planned check's inputs key and the passes it may reuse (recorded, so a replay
 * decides the same). With `verification.reuseEvidence` off, keys are still recorded (a later run may
 * reuse them) but nothing is reused.
 */
export function reuseStep(
  v: VerificationRun,
  ws: SandboxWorkspace,
  plan: VerificationPlan,
  project: ProjectChecks,
  tree: string,
): Promise<ReusePlan> {
  const { deps, run, input } = v;
  return run.step("reuse", async (): Promise<ReusePlan> => {
    const inputs: ReuseInputs = {
      tree,
      project,
      toolchain: await toolchainOf(ws, plan),
      baseCommit: input.candidate.baseCommit,
      contractChanges: input.change.contractChanges,
    };
    const keys: Record<string, string> = {};
    const found: Record<string, ReusableEvidence | null> = {};
    for (const check of plan.checks) {
      keys[check.id] = inputsKeyOf(check, plan.checks, inputs);
      // A check already recorded (a replay after a restart) keeps its record.
      const recorded = (await run.done(`evidence:${check.id}`)) !== null;
      found[check.id] =
        deps.config.verification.reuseEvidence && !recorded && check.argv && !check.undeclared
          ? await reusableEvidence(deps.db, {
              projectId: input.project.id,
              candidateId: input.candidate.id,
              inputsKey: keys[check.id] as string,
            })
          : null;
    }
    return { keys, reuse: decideReuse(plan.checks, found) };
  });
}

/**
 * Step `evidence:<id>` for a reused check: a new Evidence row of this Candidate copying the pass it
 * reuses, with `reusedFrom` naming it, no duration of its own, and a detail that says the command did
 * not run here. Its ID is the one the check's own run would have had, so a replay writes nothing twice.
 */
export async function recordReusedStep(v: VerificationRun, check: PlannedCheck, key: string, from: ReusableEvidence) {
  const { deps, run, ids } = v;
  await run.txStep(`evidence:${check.id}`, (ctx) =>
    recordEvidence(
      ctx,
      ids,
      {
        id: `ev_${ids.candidateId.slice(5)}_${check.id}`,
        checkId: check.id,
        kind: check.kind,
        status: from.status,
        coverage: from.coverage,
        durationMs: 0,
        timeoutSeconds: check.timeoutSeconds,
        metrics: from.metrics,
        outputKey: from.outputKey,
        command: from.command,
        outputTail: null,
        excerpt: null,
        tests: from.tests,
        attachments: from.attachments,
        detail: `reused from ${from.candidateId} (${from.id}): identical tree, command, setup and toolchains; the command did not run for this Candidate. ${from.detail}`,
        inputsKey: key,
        reusedFrom: from.id,
        completedAt: deps.now(),
      },
      deps,
    ),
  );
}
