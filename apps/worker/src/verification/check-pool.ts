import type { PlannedCheck, RhumbatronConfig, SandboxWorkspace } from "@rhumbatron/core";
import { canCopy } from "../sandbox/workspace.ts";

export interface CheckPoolDeps {
  config: Pick<RhumbatronConfig, "checks" | "browser">;
  /** Whether the check's Evidence is already recorded (a replay then needs no copy). */
  recorded(check: PlannedCheck): Promise<boolean>;
  /** Runs the check in the workspace given and records its Evidence (its own steps). */
  record(ws: SandboxWorkspace, check: PlannedCheck): Promise<void>;
  /** Restores the Candidate's working copy after a restart, before it is copied. */
  restore(): Promise<void>;
}

/**
 * Runs a Candidate's planned checks, the independent ones at once (docs/verification.md). One
 * after another, each check saw what the ones before it left in the
 * workspace, and what a later check may read is what the check that prepares the tree left (a
 * build's output; checks-file.ts, `prepares`). So that check runs first in the Candidate's
 * workspace, the tree it leaves is the prepared tree, and every other check starts from its own copy of it (workspace.ts, `copy`): what one check writes
 * (dist/, node_modules, a stray file) never reaches another. Up to `checks.concurrency` command
 * checks and `browser.concurrency` browser checks run at once. Every check keeps its own steps
 * (`check:<id>`, `evidence:<id>`), Evidence, timeout and Sandbox limits, exactly as when run alone;
 * a replayed step replays without a copy. With a concurrency of 1, or a Sandbox whose workspaces
 * cannot be copied, the checks run one after another in the workspace as before. (The contract
 * check's base half, which reads no check's output, starts even before `build`: workflow.ts.)
 */
export async function runPlannedChecks(
  deps: CheckPoolDeps,
  ws: SandboxWorkspace,
  checks: readonly PlannedCheck[],
): Promise<void> {
  const { config } = deps;
  const first = checks.filter((c) => c.prepares);
  const rest = checks.filter((c) => !c.prepares);
  if (config.checks.concurrency <= 1 || rest.length <= 1 || !canCopy(ws)) {
    for (const check of checks) await deps.record(ws, check);
    return;
  }
  for (const check of first) await deps.record(ws, check);
  const commands = limiter(config.checks.concurrency);
  const browsers = limiter(config.browser.concurrency);
  const results = await Promise.allSettled(
    rest.map((check) =>
      (check.kind === "browser" ? browsers : commands)(async () => {
        if (await deps.recorded(check)) return deps.record(ws, check);
        await deps.restore();
        const own = await ws.copy(check.id);
        try {
          await deps.record(own, check);
        } finally {
          await own.remove().catch(() => {});
        }
      }),
    ),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
}

/** At most `n` of the functions it is given run at once; the others wait their turn, in order. */
export function limiter(n: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  // A finishing function hands its slot straight to the next waiting one, so `active` never passes n.
  const acquire = () => (active < n ? void active++ : new Promise<void>((resolve) => waiting.push(resolve)));
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    await acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  };
}
