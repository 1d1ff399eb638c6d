import { readFile, realpath, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  type CommandResult,
  candidateFork,
  DomainError,
  failureExcerpt,
  type PlannedCheck,
  type SandboxWorkspace,
} from "@rhumbatron/core";
import { knownTests, takeBrowserRun, type VerificationInput } from "@rhumbatron/db";
import {
  type Attempt,
  type AttemptPlan,
  attemptPlan,
  attemptsDetail,
  mergeAttempts,
  wantsAnother,
} from "./attempts.ts";
import { lastLines, type ReportReading, readCommandCheck } from "./checks.ts";
import { CandidateClosed } from "./closed-watch.ts";
import { ensureWorkingCopy } from "./composition.ts";
import { contractAgainstBase } from "./contract-base.ts";
import { playwrightToolchain, preparePlaywrightRun } from "./playwright-check.ts";
import { ReportUnreadable, readReport } from "./reports.ts";
import {
  evidenceFrom,
  evidenceKey,
  OUTPUT_TAIL_LINES,
  type SerializedEvidence,
  type VerificationDeps,
} from "./verification-run.ts";

// One planned check run on the composed commit and read into Evidence, by its kind.

/** How one check runs: a rerun's tag, and how a first verification learns that its Candidate closed. */
export interface CheckRunOptions {
  /** `r1`, `r2`…: a rerun's record sits beside the earlier ones. */
  tag?: string;
  /** Throws CandidateClosed once the Candidate was closed (stale or cancelled) while its checks run. */
  closed?: () => void;
  /** The check's inputs key (reuse.ts), kept on its Evidence so a later identical run may reuse a pass. */
  inputsKey?: string | null;
  /** The contract check's base route table, started ahead beside the other checks (contract-base.ts). */
  baseRouteTable?: Promise<CommandResult | null>;
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
  { tag, closed, baseRouteTable }: CheckRunOptions = {},
): Promise<SerializedEvidence> {
  const started = deps.now();
  try {
    await ensureWorkingCopy(deps, ws, candidateFork(input.candidate.id), commit);
    const e = await runCheck(deps, input, ws, check, started, tag, baseRouteTable);
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
  baseRouteTable?: Promise<CommandResult | null>,
): Promise<SerializedEvidence> {
  const e = await readCheck(deps, input, ws, check, started, tag ? `.${tag}` : "", baseRouteTable);
  return tag ? { ...e, id: `${e.id}_${tag}` } : e;
}

async function readCheck(
  deps: VerificationDeps,
  input: VerificationInput,
  ws: SandboxWorkspace,
  check: PlannedCheck,
  started: Date,
  suffix: string,
  baseRouteTable: Promise<CommandResult | null> | undefined,
): Promise<SerializedEvidence> {
  const key = evidenceKey(input.project.id, input.candidate.id, `${check.id}${suffix}.log`);
  const save = async (text: string) => {
    await deps.blobs.put(key, new TextEncoder().encode(text), { contentType: "text/plain; charset=utf-8" });
    return key;
  };
  const run: CheckRun = { deps, input, ws, check, started, suffix, save, baseRouteTable };
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
  /** The contract check's base route table, when it was started ahead. */
  baseRouteTable: Promise<CommandResult | null> | undefined;
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
  baseRouteTable,
}: CheckRun & { check: { env?: Record<string, string> } }) {
  if (!check.argv)
    throw new DomainError("INVALID_CONFIG", check.undeclared ? check.reason : `check ${check.id} has no command`);
  const timeoutMs = check.timeoutSeconds * 1000;
  const argv = check.argv;
  const once = async (): Promise<Attempt> => {
    // A report left by the base tree or an earlier run must never stand for this one.
    if (check.report?.path) await rm(join(ws.path, check.report.path), { force: true, recursive: true });
    const r = await ws.run({
      argv,
      timeoutMs,
      ...(check.tools ? { allow: check.tools } : {}),
      ...(check.env ? { env: check.env } : {}),
    });
    return { r, report: check.report && !r.timedOut ? await readCheckReport(ws, check.report, r) : null };
  };
  const attempts = await attemptsOf(deps, input, check.id, once);
  const { r, report } = mergeAttempts(attempts.done, attempts.plan);
  let log = attempts.done
    .map((a, n) => `${n ? `\n--- attempt ${n + 1} ---\n` : ""}$ ${argv.join(" ")}\n${a.r.stdout}\n${a.r.stderr}`)
    .join("");
  let reading = readCommandCheck(check, r, report);
  const more = attemptsDetail(attempts.done, { r, report });
  if (more)
    reading = {
      ...reading,
      detail: `${reading.detail}; ${more}`,
      metrics: { ...reading.metrics, attempts: attempts.done.length },
    };

  if (check.kind === "contract" && reading.status === "pass") {
    const against = await contractAgainstBase(
      deps,
      input,
      ws,
      { ...check, argv: check.argv },
      r,
      timeoutMs,
      baseRouteTable,
    );
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
      // Each attempt had the check's timeout; the record's duration is the longest.
      durationMs: Math.max(...attempts.done.map((a) => a.r.durationMs)),
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

/**
 * The check's runs on this tree: the first, then more while attempts.ts asks (a failing test not
 * yet passed, or tests the project never ran). A run that times out ends the attempts and is not
 * counted: it says nothing about any one test.
 */
async function attemptsOf(
  deps: VerificationDeps,
  input: VerificationInput,
  checkId: string,
  once: () => Promise<Attempt>,
): Promise<{ done: Attempt[]; plan: AttemptPlan }> {
  const first = await once();
  const ids = first.report && "report" in first.report ? first.report.report.tests.map((t) => t.id) : [];
  if (ids.length === 0) return { done: [first], plan: { failing: new Set(), fresh: new Set() } };
  const plan = attemptPlan(first, await knownTests(deps.db, input.project.id, checkId, ids));
  const done = [first];
  while (wantsAnother(done, plan, deps.config.tests)) {
    const next = await once();
    if (next.r.timedOut) break;
    done.push(next);
  }
  return { done, plan };
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
