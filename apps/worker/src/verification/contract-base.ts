import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type CommandResult, candidateFork, type PlannedCheck, type SandboxWorkspace } from "@rhumbatron/core";
import { type VerificationInput, withRepoToken } from "@rhumbatron/db";
import { canCopy } from "../sandbox/workspace.ts";
import { compareContract, type readCommandCheck, routesOf } from "./checks.ts";
import type { VerificationDeps, VerificationRun } from "./verification-run.ts";

// The contract check's base half: the base commit's route table, compared with the composed one.

/** Where the base commit is checked out, inside the Candidate's workspace. */
const BASE_DIR = ".rhumbatron-base";

export type CheckReading = ReturnType<typeof readCommandCheck>;

/**
 * The contract check's second half: the base's route table, from a checkout of the base commit
 * beside the composed tree, compared with the composed one and the Change's declared contract
 * changes. Runs in what is left of the check's timeout.
 */
export async function contractAgainstBase(
  deps: VerificationDeps,
  input: VerificationInput,
  ws: SandboxWorkspace,
  check: PlannedCheck & { argv: string[] },
  r: CommandResult,
  timeoutMs: number,
  ahead: Promise<CommandResult | null> | undefined,
): Promise<{ reading: CheckReading; log: string }> {
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

/**
 * The contract check's base half does not depend on the composed tree, so when checks run at once
 * it starts beside `build`, in its own copy of the Candidate's workspace (taken before `build`
 * writes anything), with the check's timeout; the contract check then reads it instead of running
 * it after its own command. A base run that could not start is run again by the check, as before.
 */
export async function prefetchBaseRouteTable(
  v: VerificationRun,
  ws: SandboxWorkspace,
  checks: readonly PlannedCheck[],
): Promise<{ table: Promise<CommandResult | null> } | undefined> {
  const { deps, input } = v;
  const check = checks.find((c) => c.kind === "contract");
  if (!check?.argv || deps.config.checks.concurrency <= 1 || !canCopy(ws)) return undefined;
  if (await v.run.done(`evidence:${check.id}`)) return undefined;
  const own = await ws.copy(`${check.id}-base`).catch(() => null);
  if (!own) return undefined;
  // Null when it could not run: the contract check then runs the base itself.
  const table = baseRouteTable(deps, input, own, { ...check, argv: check.argv }, check.timeoutSeconds * 1000)
    .catch(() => null)
    .finally(() => own.remove().catch(() => {}));
  return { table };
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
