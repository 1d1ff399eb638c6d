import { existsSync } from "node:fs";
import { readFile, realpath, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  appendOnlyMatcher,
  buildVerificationPlan,
  type CommandResult,
  type ComposableChangeSet,
  candidateFork,
  candidateStatusIn,
  canonicalRepo,
  checkCompatibility,
  DomainError,
  dirForCandidate,
  type FileChangeKind,
  failureExcerpt,
  humanGateApplies,
  type PlannedCheck,
  type ProjectChecks,
  type SandboxWorkspace,
  sourceKeys,
  type VerificationPlan,
} from "@rhumbatron/core";
import {
  activeVerificationPolicy,
  loadVerificationInput,
  markCandidateComposed,
  readGate,
  recordEvidence,
  reserveSandboxSeconds,
  type SandboxReservation,
  settleSandbox,
  takeBrowserRun,
  type VerificationInput,
  type VerificationOutcome,
  withRepoToken,
  withRepoTokens,
} from "@rhumbatron/db";
import { finishWorkflowInstance } from "@rhumbatron/runtime";
import { canCopy } from "../sandbox/workspace.ts";
import { storePatch } from "../source/code-store.ts";
import { runPlannedChecks } from "./check-pool.ts";
import { compareContract, lastLines, type ReportReading, readCommandCheck, routesOf } from "./checks.ts";
import { CandidateClosed, watchCandidateClosed } from "./closed-watch.ts";
import { conflictReviewStep } from "./conflict-review.ts";
import { playwrightToolchain, preparePlaywrightRun } from "./playwright-check.ts";
import { checksFileInCheckout } from "./project-checks.ts";
import { checksStep, requiresStep, setupStep } from "./project-steps.ts";
import { ReportUnreadable, readReport } from "./reports.ts";
import { recordReusedStep, reuseStep } from "./reuse.ts";
import {
  evidenceFrom,
  evidenceKey,
  OUTPUT_TAIL_LINES,
  refusalEvidence,
  type SerializedEvidence,
  type VerificationDeps,
  type VerificationRun,
  type VerificationRunResult,
  verificationRun,
} from "./verification-run.ts";

const BASE_DIR = ".rhumbatron-base";
/** How often a verification reads whether its Candidate was closed while checks run. */
const CLOSED_POLL_MS = 2_000;

/**
 * CandidateVerificationWorkflow (docs/verification.md; its steps are charted
 * in docs/workflows.md): one instance per Candidate, every step recorded so a re-run replays it,
 * every check its own step with its own timeout. Its one model call is the conflict review, only
 * when two Tasks changed the same file (conflict-review.ts); the model decides nothing by itself.
 * load -> final already? -> base still canonical? -> compatibility -> fork cand-<id> -> reserve
 * Sandbox seconds -> merge the ChangeSets in Work Graph order in the Candidate's Sandbox run
 * directory -> plan, verifying, candidate.composed -> conflict review -> one step per check
 * (Evidence rows, output blobs; `build` first, the others at once, each in its own copy of the built
 * tree: check-pool.ts) -> gate -> verified (+ approval.requested) or rejected -> settle.
 */

export async function runVerification(deps: VerificationDeps, instanceId: string): Promise<VerificationRunResult> {
  const input = await loadVerificationInput(deps.db, instanceId);
  if (!input) {
    await finishWorkflowInstance(deps.db, instanceId, { status: "failed", error: "no such Candidate" }, deps.now());
    return { candidateId: instanceId, outcome: "failed", detail: "no such Candidate" };
  }
  const v = verificationRun(deps, instanceId, input);
  const { candidate, project } = input;
  if (candidateStatusIn(candidate.status, "settled")) return v.skip(`already ${candidate.status}`);
  if (candidate.baseGeneration !== project.canonicalGeneration) {
    return v.finish({ status: "stale", canonicalGeneration: project.canonicalGeneration });
  }
  const incompatible = await compatibilityStep(v);
  if (incompatible) return v.finish(incompatible);
  const checks = await checksStep(v);
  if (!checks.ok) return v.finish(checks.outcome);
  await forkStep(v);
  const reserved = await reserveStep(v);
  if (!reserved.ok) return v.finish({ status: "rejected", reason: `no Sandbox budget: ${reserved.reason}`, gaps: [] });
  const ws = await deps.sandbox.open({ projectId: project.id, dirName: dirForCandidate(candidate.id) });
  const done = async (o: VerificationOutcome) => {
    await settleStep(v, reserved);
    await ws.remove().catch(() => {});
    return v.finish(o);
  };
  const merged = await mergeStep(v, ws);
  if (!merged.ok) return done(merged.outcome);
  const plan = await planStep(v, merged, checks.project);
  const unmet = await requiresStep(v, ws, plan);
  if (unmet) return done(unmet);
  const setup = await setupStep(v, ws, checks.project);
  if (setup) return done(setup);
  await conflictReviewStep(v, merged, () => composable(deps, input.changeSets));
  // A Candidate closed while its checks run (its Change cancelled, or it went stale) stops them at
  // once; nothing more is recorded for it, so a stopped check is never Evidence of a failure.
  // Checks whose inputs match a recorded pass of this project reuse it (reuse.ts); the others run.
  const reuse = await reuseStep(v, ws, plan, checks.project, merged.tree);
  const toRun = plan.checks.filter((c) => !reuse.reuse[c.id]);
  for (const check of plan.checks) {
    const from = reuse.reuse[check.id];
    if (from) await recordReusedStep(v, check, reuse.keys[check.id] ?? "", from);
  }
  const watch = watchCandidateClosed(deps.db, candidate.id, CLOSED_POLL_MS);
  const checked = watch.workspace(ws);
  try {
    await prefetchBaseRouteTable(v, checked, toRun);
    await runPlannedChecks(
      {
        config: deps.config,
        recorded: async (check) => (await v.run.done(`evidence:${check.id}`)) !== null,
        record: (own, check) =>
          checkAndRecordStep(v, own, merged.commit, check, {
            closed: watch.check,
            inputsKey: reuse.keys[check.id] ?? null,
          }),
        restore: () => ensureWorkingCopy(deps, ws, candidateFork(candidate.id), merged.commit),
      },
      checked,
      toRun,
    );
    watch.check();
  } catch (err) {
    if (!(err instanceof CandidateClosed)) throw err;
    await settleStep(v, reserved);
    await ws.remove().catch(() => {});
    return v.skip(err.message);
  } finally {
    watch.stop();
    prefetchedBase.delete(candidate.id);
  }
  return done(await gateStep(v, plan, merged.tree));
}

/** Step `compatibility`: what each ChangeSet does to each file; an incompatible set is rejected with Evidence. */
async function compatibilityStep(v: VerificationRun): Promise<VerificationOutcome | null> {
  const { deps, run, input, ids } = v;
  const compat = await run.step("compatibility", async () =>
    checkCompatibility(await composable(deps, input.changeSets)),
  );
  if (compat.status !== "incompatible") return null;
  const lines = compat.conflicts.map((c) => `${c.path}: ${c.reason}`);
  await run.txStep("evidence:composition", (ctx) =>
    recordEvidence(ctx, ids, refusalEvidence(ids.candidateId, "composition", lines, deps.now()), deps),
  );
  return {
    status: "rejected",
    reason: "the ChangeSets cannot be composed",
    gaps: compat.conflicts.map((c) => `composition: ${c.path} ${c.reason}`),
  };
}

/** Step `fork`: the Candidate's own repository, cand-<id>, forked from canonical. */
async function forkStep(v: VerificationRun): Promise<void> {
  const { deps, input } = v;
  const fork = candidateFork(input.candidate.id);
  await v.run.step("fork", async () => {
    const canonical = canonicalRepo(input.project.id);
    await withRepoToken(
      deps.db,
      { repo: canonical, mode: "read", purpose: `fork ${fork}` },
      deps.config,
      deps.now,
      (token) => deps.source.fork(canonical, token, fork),
    );
    return { fork };
  });
}

export type Reserved = { ok: true; reservation: SandboxReservation; at: string } | { ok: false; reason: string };

/** Step `reserve`: the Candidate's Sandbox seconds (stable ID sbxres_<candidate>); a refusal is a rejection. */
export function reserveStep(v: VerificationRun): Promise<Reserved> {
  const { deps } = v;
  return v.run.step("reserve", async (): Promise<Reserved> => {
    try {
      const r = await reserveSandboxSeconds(
        deps.db,
        { kind: "candidate", id: v.reservationId, changeId: v.ids.changeId },
        deps.config,
        deps.now(),
      );
      return { ok: true, reservation: r, at: deps.now().toISOString() };
    } catch (err) {
      if (err instanceof DomainError && err.code === "PRECONDITION_FAILED") return { ok: false, reason: err.message };
      throw err;
    }
  });
}

/** Step `settle`: the meter charges what the Candidate's Sandbox ran. */
export function settleStep(v: VerificationRun, reserved: Extract<Reserved, { ok: true }>) {
  const { deps } = v;
  return v.run.step("settle", () =>
    settleSandbox(
      deps.db,
      reserved.reservation,
      {
        wallSeconds: Math.ceil((deps.now().getTime() - new Date(reserved.at).getTime()) / 1000),
        billing: deps.sandbox.billing,
      },
      deps.config,
    ),
  );
}

type MergeStepResult =
  | (Extract<Merged, { ok: true }> & { ok: true })
  | { ok: false; outcome: Extract<VerificationOutcome, { status: "rejected" }> };

/** Step `merge`: the ChangeSets composed on the base; a conflict is a rejection with composition Evidence. */
async function mergeStep(v: VerificationRun, ws: SandboxWorkspace): Promise<MergeStepResult> {
  const { deps, run, input, ids } = v;
  const merged = await run.step("merge", () => merge(deps, input, ws, candidateFork(ids.candidateId)));
  if (merged.ok) return merged;
  await run.txStep("evidence:composition", (ctx) =>
    recordEvidence(ctx, ids, refusalEvidence(ids.candidateId, "composition", merged.lines, deps.now()), deps),
  );
  return {
    ok: false,
    outcome: {
      status: "rejected",
      reason: "merge conflict",
      gaps: merged.lines.map((line) => `composition: merge conflict in ${line}`),
      conflictTasks: merged.tasks ?? [],
    },
  };
}

/**
 * Step `composed`: the Verification Plan for the composed paths under the project's active policy
 * (the plan records its version; promotion refuses a plan whose version is no longer active); the
 * Candidate is verifying. `deps.policy`, when a test sets one, stands in for the project's.
 */
function planStep(
  v: VerificationRun,
  merged: Extract<Merged, { ok: true }>,
  project: ProjectChecks,
): Promise<VerificationPlan> {
  const { deps, input, ids } = v;
  return v.run.txStep("composed", async (ctx) => {
    const policy = deps.policy ?? (await activeVerificationPolicy(ctx.tx, input.project.id, deps.config));
    const p = buildVerificationPlan(
      {
        riskTier: input.change.riskTier,
        invariants: input.change.invariants,
        goals: input.change.goals as { p95LatencyMs?: number },
      },
      merged.paths,
      policy,
      deps.config,
      project,
    );
    await markCandidateComposed(
      ctx,
      { ...ids, commit: merged.commit, tree: merged.tree, plan: p, approvalRequired: humanGateApplies(p, policy) },
      deps,
    );
    return p;
  });
}

/** How one check runs: a rerun's tag, and how a first verification learns that its Candidate closed. */
export interface CheckRunOptions {
  /** `r1`, `r2`…: a rerun's record sits beside the earlier ones. */
  tag?: string;
  /** Throws CandidateClosed once the Candidate was closed (stale or cancelled) while its checks run. */
  closed?: () => void;
  /** The check's inputs key (reuse.ts), kept on its Evidence so a later identical run may reuse a pass. */
  inputsKey?: string | null;
}

/**
 * Steps `check:<id>` and `evidence:<id>`: one planned check run, its Evidence recorded with its
 * Event. A check stopped because its Candidate closed records nothing (closed-watch.ts): it throws
 * CandidateClosed out of both steps.
 */
export async function checkAndRecordStep(
  v: VerificationRun,
  ws: SandboxWorkspace,
  commit: string,
  check: PlannedCheck,
  o: CheckRunOptions = {},
) {
  const { deps, run, input, ids } = v;
  const evidence = await run.step(`check:${check.id}`, () => checkStep(deps, input, ws, commit, check, o));
  o.closed?.();
  await run.txStep(`evidence:${check.id}`, (ctx) =>
    recordEvidence(
      ctx,
      ids,
      { ...evidence, inputsKey: o.inputsKey ?? null, completedAt: new Date(evidence.completedAt) },
      deps,
    ),
  );
}

/** The gate over the latest record of every required check: verified (maybe behind the human gate) or rejected. */
export async function gateStep(
  v: VerificationRun,
  plan: VerificationPlan,
  tree: string,
  // The plan's gate already holds what its policy asks (humanGateApplies under the plan's own policy).
  humanGate = plan.humanGate,
): Promise<VerificationOutcome> {
  // A conflict review's supported blocking finding is a gap too (docs/verification.md, Conflict
  // reviews), and so
  // is a command or program Agent's edit outside its Task's declared paths (db readGate).
  const gate = await readGate(v.deps.db, v.input.candidate, plan);
  if (gate.promotable) return { status: "verified", gate, humanGate, treeHash: tree };
  if (plan.checks.length === 0) {
    // Nothing ran, so nothing is verified: the project declares no check that applies to this Change.
    return {
      status: "rejected",
      reason: "no check applies to this Change: its checks file applies none and its policy requires none",
      gaps: ["checks: none applies; give a check without `when`, or a rule that holds for this Change"],
      gate,
    };
  }
  const findings = gate.gaps.filter((g) => g.gap === "blocking_finding").length;
  const outside = gate.gaps.filter((g) => g.gap === "outside_paths").length;
  const checks = gate.gaps.length - findings - outside;
  const s = (n: number) => (n === 1 ? "" : "s");
  return {
    status: "rejected",
    reason: [
      checks ? `${checks} required check${s(checks)} not satisfied` : "",
      findings ? `${findings} blocking conflict-review finding${s(findings)}` : "",
      outside
        ? `${outside} ChangeSet${s(outside)} edited outside ${outside === 1 ? "its Task's" : "their Tasks'"} declared paths`
        : "",
    ]
      .filter(Boolean)
      .join("; "),
    gaps: gate.gaps.map((g) => `${g.checkId}: ${g.gap} (${g.detail})`),
    gate,
  };
}

/** What each ChangeSet does to each file, from its fork (the input of checkCompatibility). */
async function composable(
  deps: VerificationDeps,
  sets: VerificationInput["changeSets"],
): Promise<ComposableChangeSet[]> {
  const out: ComposableChangeSet[] = [];
  for (const cs of sets) {
    const files = await withRepoToken(
      deps.db,
      { repo: cs.fork, mode: "read", purpose: `compatibility ${cs.id}` },
      deps.config,
      deps.now,
      async (token) => {
        const before = new Map((await deps.source.files(cs.fork, token, cs.baseCommit)).map((f) => [f.path, f.oid]));
        const after = new Map((await deps.source.files(cs.fork, token, cs.commit)).map((f) => [f.path, f.oid]));
        const changed: { path: string; kind: FileChangeKind }[] = [];
        for (const [path, oid] of after) {
          if (!before.has(path)) changed.push({ path, kind: "add" });
          else if (before.get(path) !== oid) changed.push({ path, kind: "modify" });
        }
        for (const path of before.keys()) if (!after.has(path)) changed.push({ path, kind: "delete" });
        return changed;
      },
    );
    const builtOn = sets.filter((o) => cs.upstreamTasks.includes(o.taskKey)).map((o) => o.id);
    out.push({ id: cs.id, files, builtOn });
  }
  return out;
}

type Merged =
  | { ok: true; commit: string; tree: string; paths: string[] }
  /** `tasks`: the Tasks whose ChangeSets could not apply (absent in a step recorded before it was kept). */
  | { ok: false; reason: string; paths: string[]; lines: string[]; tasks?: string[] };

/**
 * Checks out the base in the Candidate's run directory, merges each ChangeSet's commit in Work
 * Graph order, pushes the result to cand-<id> (fast-forward from the base) and stores the
 * Candidate-vs-base patch.
 */
export async function merge(
  deps: VerificationDeps,
  input: VerificationInput,
  ws: SandboxWorkspace,
  fork: string,
): Promise<Merged> {
  const { candidate, project } = input;
  await rm(ws.path, { recursive: true, force: true });
  const dir = (await deps.sandbox.open({ projectId: project.id, dirName: dirForCandidate(candidate.id) })).path;
  const token = (repo: string, mode: "read" | "write", purpose: string) => ({ repo, mode, purpose });
  await withRepoToken(deps.db, token(fork, "read", "checkout"), deps.config, deps.now, (t) =>
    deps.source.checkout(fork, t, dir, candidate.baseCommit),
  );
  // The files everyone appends to, from the base's checks file (never the Candidate's own).
  const appendOnly = appendOnlyMatcher(deps.projectChecks?.file ?? (await checksFileInCheckout(dir)));
  let commit: string;
  try {
    commit = await composeAll(deps, dir, input, appendOnly);
  } catch (err) {
    if (err instanceof DomainError && err.code === "CONFLICT") {
      return {
        ok: false,
        reason: err.message,
        paths: (err.details?.paths as string[] | undefined) ?? [],
        lines: (err.details?.lines as string[] | undefined) ?? [err.message],
        tasks: [
          ...new Set(((err.details?.conflicts as { taskKey: string }[] | undefined) ?? []).map((c) => c.taskKey)),
        ],
      };
    }
    throw err;
  }
  await withRepoToken(deps.db, token(fork, "write", "push"), deps.config, deps.now, (t) =>
    deps.source.push(dir, fork, t),
  );
  // The checks see the submodules an import fetched, as a recursive clone has them.
  await deps.source.materializeSubmodules(dir);
  return withRepoToken(deps.db, token(fork, "read", "composed"), deps.config, deps.now, async (t) => {
    const tree = await deps.source.treeOf(fork, t, commit);
    const diff = await deps.source.diff(fork, t, candidate.baseCommit, commit);
    // Stored even when empty, so the page can say the Candidate changes nothing instead of "not stored".
    await storePatch(
      deps.blobs,
      sourceKeys.candidatePatch(project.id, candidate.id),
      diff.patch,
      deps.config.source.patchMaxBytes,
    );
    return { ok: true as const, commit, tree, paths: diff.paths };
  });
}

/**
 * The Candidate's composition: every ChangeSet's own diff replayed on the base in Work Graph order
 * (docs/composition.md). Its time is the Candidate's creation, so the same Candidate always gets the
 * same commit.
 */
async function composeAll(
  deps: VerificationDeps,
  dir: string,
  input: VerificationInput,
  appendOnly: (path: string) => boolean,
): Promise<string> {
  const sets = input.changeSets;
  if (sets.length === 0) throw new DomainError("PRECONDITION_FAILED", "the Candidate has no ChangeSets to compose");
  return withRepoTokens(
    deps.db,
    sets.map((cs) => ({ repo: cs.fork, mode: "read" as const, purpose: `compose ${cs.id}` })),
    deps.config,
    deps.now,
    (tokens) =>
      deps.source.compose(
        dir,
        input.candidate.baseCommit,
        sets.map((cs, i) => ({
          repo: cs.fork,
          token: tokens[i] ?? "",
          changeSetId: cs.id,
          taskKey: cs.taskKey,
          baseCommit: cs.baseCommit,
          commit: cs.commit,
        })),
        {
          // The Change's title, then trailers; the generation is the one promotion's compare-and-swap gives it.
          message: `${input.change.title}\n\n${sets.length} ChangeSet(s) composed on S${input.candidate.baseGeneration}.\n\nChange: ${input.change.id}\nCandidate: ${input.candidate.id}\nGeneration: ${input.candidate.baseGeneration + 1}\n`,
          at: input.candidate.createdAt,
          appendOnly,
        },
      ),
  );
}

/** After a restart the run directory may be gone: check the composed commit out again. */
export async function ensureWorkingCopy(deps: VerificationDeps, ws: SandboxWorkspace, fork: string, commit: string) {
  if (existsSync(join(ws.path, ".git", "HEAD"))) return;
  await withRepoToken(deps.db, { repo: fork, mode: "read", purpose: "restore" }, deps.config, deps.now, (t) =>
    deps.source.checkout(fork, t, ws.path, commit),
  );
  await deps.source.materializeSubmodules(ws.path);
}

/**
 * One check on the composed commit; a check that throws is an error with nothing checked (a gap,
 * never a pass). A check whose Candidate closed while it ran was stopped, not failed: whatever it
 * returned or threw then (a killed command, a browser flow whose app was killed) is no result of
 * the code, so CandidateClosed is thrown instead and nothing is recorded (docs/verification.md,
 * The workflow, step 6).
 */
export async function checkStep(
  deps: VerificationDeps,
  input: VerificationInput,
  ws: SandboxWorkspace,
  commit: string,
  check: PlannedCheck,
  { tag, closed }: CheckRunOptions = {},
): Promise<SerializedEvidence> {
  const started = deps.now();
  try {
    await ensureWorkingCopy(deps, ws, candidateFork(input.candidate.id), commit);
    const e = await runCheck(deps, input, ws, check, started, tag);
    closed?.();
    return e;
  } catch (err) {
    if (err instanceof CandidateClosed) throw err;
    closed?.();
    const e = evidenceFrom(input.candidate.id, check, started, deps.now(), {
      status: "error",
      coverage: "not_checked",
      metrics: {},
      detail: `the check could not run: ${err instanceof Error ? err.message : String(err)}`,
    });
    return tag ? { ...e, id: `${e.id}_${tag}` } : e;
  }
}

/**
 * Runs one planned check and reads its Evidence. A rerun passes its tag (`r1`, `r2`…): the record's
 * ID and output blobs get it, so the rerun's Evidence sits beside the first one.
 */
export async function runCheck(
  deps: VerificationDeps,
  input: VerificationInput,
  ws: SandboxWorkspace,
  check: PlannedCheck,
  started: Date,
  tag?: string,
): Promise<SerializedEvidence> {
  const e = await readCheck(deps, input, ws, check, started, tag ? `.${tag}` : "");
  return tag ? { ...e, id: `${e.id}_${tag}` } : e;
}

async function readCheck(
  deps: VerificationDeps,
  input: VerificationInput,
  ws: SandboxWorkspace,
  check: PlannedCheck,
  started: Date,
  suffix: string,
): Promise<SerializedEvidence> {
  const key = evidenceKey(input.project.id, input.candidate.id, `${check.id}${suffix}.log`);
  const save = async (text: string) => {
    await deps.blobs.put(key, new TextEncoder().encode(text), { contentType: "text/plain; charset=utf-8" });
    return key;
  };
  const run: CheckRun = { deps, input, ws, check, started, suffix, save };
  if (check.procedure === "browser") return readBrowserCheck(run);
  if (check.procedure === "playwright") return readPlaywrightRun(run);
  return readCommandRun(run);
}

/** One check being read: where it runs, when it started, and how its log is stored. */
interface CheckRun {
  deps: VerificationDeps;
  input: VerificationInput;
  ws: SandboxWorkspace;
  check: PlannedCheck;
  started: Date;
  /** `.r1`, `.r2`… for a rerun's blobs; empty for the first run. */
  suffix: string;
  /** Stores the check's log as its output blob and returns the key. */
  save: (text: string) => Promise<string>;
}

/** Takes one of the Candidate's browser runs; with none left, the check's skipped Evidence saying so. */
async function browserRunsSpent({
  deps,
  input,
  check,
  started,
}: Pick<CheckRun, "deps" | "input" | "check" | "started">) {
  const max = deps.config.browser.maxRunsPerCandidate;
  if (await takeBrowserRun(deps.db, input.candidate.id, max)) return null;
  return evidenceFrom(input.candidate.id, check, started, deps.now(), {
    status: "skipped",
    coverage: "not_checked",
    metrics: {},
    detail: `the Candidate has used its ${max} browser runs`,
  });
}

/** The browser check, within the Candidate's browser runs, on the built app. */
async function readBrowserCheck({ deps, input, ws, check, started, suffix, save }: CheckRun) {
  const { candidate, project } = input;
  const spent = await browserRunsSpent({ deps, input, check, started });
  if (spent) return spent;
  if (!check.argv || !check.steps)
    throw new DomainError("INVALID_CONFIG", `browser check ${check.id} has no command or steps`);
  const r = await deps.browserCheck({
    workspace: ws,
    blobs: deps.blobs,
    keyPrefix: evidenceKey(project.id, candidate.id, `${check.id}${suffix}`),
    sessionMaxMs: deps.config.browser.sessionMaxSeconds * 1000,
    warmIdleMs: deps.config.browser.warmIdleSeconds * 1000,
    // The project's own app and steps, from its checks file.
    start: check.argv,
    steps: check.steps,
    ...(check.tools ? { tools: check.tools } : {}),
  });
  const out = await save(r.log);
  return evidenceFrom(
    candidate.id,
    check,
    started,
    deps.now(),
    {
      status: r.status,
      coverage: r.coverage,
      metrics: { blockedRequests: r.blockedRequests },
      detail: r.detail + (r.blockedHosts.length ? `; blocked requests to ${r.blockedHosts.join(", ")}` : ""),
      durationMs: r.durationMs,
    },
    out,
    r.screenshots,
  );
}

/**
 * The project's own Playwright tests (playwright-check.ts), within the Candidate's browser runs: a
 * command whose report is the runner's JUnit, read like any test report, with each test's
 * screenshot and trace kept as attachments.
 */
async function readPlaywrightRun(run: CheckRun) {
  const { deps, input, ws, check, started, suffix } = run;
  const { candidate, project } = input;
  const spent = await browserRunsSpent({ deps, input, check, started });
  if (spent) return spent;
  const toolchain = playwrightToolchain();
  if (!check.argv || !check.tests || !toolchain) {
    return evidenceFrom(candidate.id, check, started, deps.now(), {
      status: "error",
      coverage: "not_checked",
      metrics: {},
      detail: toolchain
        ? `playwright check ${check.id} has no preview command or test folder`
        : "the worker has no @playwright/test to run a playwright check with (npm install in Rhumbatron's folder)",
    });
  }
  const prepared = await preparePlaywrightRun(ws.path, {
    start: check.argv,
    tests: check.tests,
    timeoutSeconds: check.timeoutSeconds,
    toolchain,
  });
  const evidence = await readCommandRun({
    ...run,
    check: { ...check, argv: prepared.argv, report: prepared.report, env: prepared.env },
  });
  const kept = await prepared.collect(deps.blobs, evidenceKey(project.id, candidate.id, `${check.id}${suffix}`));
  return { ...evidence, attachments: kept.keys };
}

/** A check that is a command, read by its kind's rules; a passing contract check is compared with the base. */
async function readCommandRun({
  deps,
  input,
  ws,
  check,
  started,
  save,
}: CheckRun & { check: { env?: Record<string, string> } }) {
  if (!check.argv)
    throw new DomainError("INVALID_CONFIG", check.undeclared ? check.reason : `check ${check.id} has no command`);
  const timeoutMs = check.timeoutSeconds * 1000;
  // A report left by the base tree or an earlier run must never stand for this one.
  if (check.report?.path) await rm(join(ws.path, check.report.path), { force: true, recursive: true });
  const r = await ws.run({
    argv: check.argv,
    timeoutMs,
    ...(check.tools ? { allow: check.tools } : {}),
    ...(check.env ? { env: check.env } : {}),
  });
  let log = `$ ${check.argv.join(" ")}\n${r.stdout}\n${r.stderr}`;
  const report = check.report && !r.timedOut ? await readCheckReport(ws, check.report, r) : null;
  let reading = readCommandCheck(check, r, report);

  if (check.kind === "contract" && reading.status === "pass") {
    const against = await contractAgainstBase(deps, input, ws, { ...check, argv: check.argv }, r, timeoutMs);
    reading = against.reading;
    log += against.log;
  }
  const out = await save(log);
  const metrics = r.exitCode === null ? reading.metrics : { ...reading.metrics, exitCode: r.exitCode };
  return evidenceFrom(
    input.candidate.id,
    check,
    started,
    deps.now(),
    {
      ...reading,
      metrics,
      durationMs: r.durationMs,
      command: check.argv.join(" "),
      // A reader of a failure sees its end inline; a pass needs none (the full log is one click away).
      outputTail: reading.status === "pass" ? null : lastLines(log, OUTPUT_TAIL_LINES),
      // And its first lines, from the whole output now (the tail may have lost them), when the command
      // itself failed; a contract comparison that failed on a clean exit says why in its detail.
      excerpt:
        reading.status !== "pass" && (r.exitCode !== 0 || r.timedOut)
          ? failureExcerpt(`${r.stdout}\n${r.stderr}`)
          : null,
      tests: report && "report" in report ? report.report.tests.slice(0, TESTS_KEPT) : null,
    },
    out,
  );
}

/** How many tests' outcomes a record keeps (failing first); the counts are always complete. */
const TESTS_KEPT = 2_000;
/** A report larger than this is not read. */
const REPORT_MAX_BYTES = 32 * 1024 * 1024;

/**
 * The check's test report: the file it names in the workspace (never one outside it: a link the
 * code under test made is not followed out), or its stdout. Read with a kept parser (reports.ts).
 */
async function readCheckReport(
  ws: SandboxWorkspace,
  report: NonNullable<PlannedCheck["report"]>,
  r: CommandResult,
): Promise<ReportReading> {
  let text: string;
  if (report.path) {
    const file = join(ws.path, report.path);
    const real = await realpath(file).catch(() => null);
    const root = await realpath(ws.path);
    if (!real) return { unreadable: `was not written (no file ${report.path})` };
    if (!real.startsWith(`${root}/`)) return { unreadable: `${report.path} leads outside the workspace` };
    const s = await stat(real);
    if (!s.isFile()) return { unreadable: `${report.path} is not a file` };
    if (s.size > REPORT_MAX_BYTES) return { unreadable: `${report.path} is larger than ${REPORT_MAX_BYTES} bytes` };
    text = await readFile(real, "utf8");
  } else {
    if (r.truncated) return { unreadable: "was cut by the Sandbox's output cap (write it to a file: report.path)" };
    text = r.stdout;
  }
  try {
    return { report: readReport(report.format, text) };
  } catch (e) {
    if (e instanceof ReportUnreadable) return { unreadable: `could not be read: ${e.message}` };
    throw e;
  }
}

type CheckReading = ReturnType<typeof readCommandCheck>;

/**
 * The contract check's second half: the base's route table, from a checkout of the base commit
 * beside the composed tree, compared with the composed one and the Change's declared contract
 * changes. Runs in what is left of the check's timeout.
 */
async function contractAgainstBase(
  deps: VerificationDeps,
  input: VerificationInput,
  ws: SandboxWorkspace,
  check: PlannedCheck & { argv: string[] },
  r: CommandResult,
  timeoutMs: number,
): Promise<{ reading: CheckReading; log: string }> {
  const ahead = prefetchedBase.get(input.candidate.id);
  prefetchedBase.delete(input.candidate.id);
  const b =
    (ahead && (await ahead)) ??
    (await baseRouteTable(deps, input, ws, check, Math.max(1_000, timeoutMs - r.durationMs)));
  const log = `\n$ (base) ${check.argv.join(" ")}\n${b.stdout}\n${b.stderr}`;
  if (b.timedOut) {
    return {
      log,
      reading: { status: "error", coverage: "not_checked", metrics: {}, detail: "the base route table timed out" },
    };
  }
  const declared = input.change.contractChanges as { added: string[]; removed: string[]; changed: string[] };
  return { log, reading: contractReading(r.stdout, b.stdout, declared) };
}

/** Base route tables being computed ahead of their contract check, by Candidate ID (null: it could not be). */
const prefetchedBase = new Map<string, Promise<CommandResult | null>>();

/**
 * The contract check's base half does not depend on the composed tree, so when checks run at once
 * it starts beside `build`, in its own copy of the Candidate's workspace (taken before `build`
 * writes anything), with the check's timeout; the contract check then reads it instead of running
 * it after its own command. A base run that could not start is run again by the check, as before.
 */
async function prefetchBaseRouteTable(v: VerificationRun, ws: SandboxWorkspace, checks: readonly PlannedCheck[]) {
  const { deps, input } = v;
  const check = checks.find((c) => c.kind === "contract");
  if (!check?.argv || deps.config.checks.concurrency <= 1 || !canCopy(ws)) return;
  if (await v.run.done(`evidence:${check.id}`)) return;
  const own = await ws.copy(`${check.id}-base`).catch(() => null);
  if (!own) return;
  const table = baseRouteTable(deps, input, own, { ...check, argv: check.argv }, check.timeoutSeconds * 1000)
    .catch(() => null)
    .finally(() => own.remove().catch(() => {}));
  prefetchedBase.set(input.candidate.id, table);
}

/** Runs the contract command on a checkout of the base commit beside the composed tree, then removes it. */
async function baseRouteTable(
  deps: VerificationDeps,
  input: VerificationInput,
  ws: SandboxWorkspace,
  check: PlannedCheck & { argv: string[] },
  timeoutMs: number,
): Promise<CommandResult> {
  const fork = candidateFork(input.candidate.id);
  await rm(join(ws.path, BASE_DIR), { recursive: true, force: true });
  await withRepoToken(deps.db, { repo: fork, mode: "read", purpose: "contract base" }, deps.config, deps.now, (t) =>
    deps.source.checkout(fork, t, join(ws.path, BASE_DIR), input.candidate.baseCommit),
  );
  const b = await ws.run({
    argv: check.argv,
    cwd: BASE_DIR,
    timeoutMs,
    ...(check.tools ? { allow: check.tools } : {}),
  });
  await rm(join(ws.path, BASE_DIR), { recursive: true, force: true });
  return b;
}

/** The composed route table against the base's with the declared contract changes applied. */
function contractReading(
  composedOutput: string,
  baseOutput: string,
  declared: { added: string[]; removed: string[]; changed: string[] },
): CheckReading {
  const composed = routesOf(composedOutput);
  const base = routesOf(baseOutput);
  if (!composed || !base) {
    return {
      status: "pass",
      coverage: "checked_no_signal",
      metrics: {},
      detail: 'no route table printed ({"routes": [...]})',
    };
  }
  const cmp = compareContract(base, composed, declared);
  if (cmp.ok) {
    return {
      status: "pass",
      coverage: "checked_supported",
      metrics: { routes: composed.length },
      detail: "the route table matches the declared contract changes",
    };
  }
  const detail = [
    cmp.unexpected.length ? `undeclared routes: ${cmp.unexpected.join(", ")}` : "",
    cmp.missing.length ? `missing routes: ${cmp.missing.join(", ")}` : "",
  ]
    .filter(Boolean)
    .join("; ");
  return { status: "fail", coverage: "checked_supported", metrics: { routes: composed.length }, detail };
}
