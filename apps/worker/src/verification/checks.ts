import {
  type CommandResult,
  type Coverage,
  type EvidenceStatus,
  isTestCheck,
  type PlannedCheck,
} from "@rhumbatron/core";

/**
 * Reading a command check's result (pure). A command that exits 0 passes; what it printed decides
 * whether it showed anything: a test run of zero tests passed without a signal. A timeout or a
 * command that could not run is an error with nothing checked, never a pass.
 */
export interface CheckReading {
  status: EvidenceStatus;
  coverage: Coverage;
  metrics: Record<string, number>;
  detail: string;
}

export interface TestCounts {
  tests: number;
  pass: number;
  fail: number;
  /** Skipped and to-do tests: they ran nothing, so they are never counted as passed. */
  skipped: number;
}

/**
 * node --test's summary counts, in either of its reporters' words: TAP (`# tests 3`, `# pass 3`,
 * ...) and spec (`ℹ tests 3`, `ℹ pass 3`, ...; the default on Node 23 and later, TTY or not).
 * A command that runs node --test more than once prints one summary per run; their sum is the
 * command's count. Colour codes are ignored. null when no summary was printed.
 */
export function testCounts(output: string): TestCounts | null {
  const plain = output.replace(ANSI, "");
  const sum = (name: string) => {
    let total: number | null = null;
    for (const m of plain.matchAll(new RegExp(`^[ \\t]*(?:#|\u2139) ${name} (\\d+)[ \\t]*\\r?$`, "gm"))) {
      total = (total ?? 0) + Number(m[1]);
    }
    return total;
  };
  const tests = sum("tests");
  if (tests === null) return null;
  return {
    tests,
    pass: sum("pass") ?? 0,
    fail: sum("fail") ?? 0,
    skipped: (sum("skipped") ?? 0) + (sum("todo") ?? 0),
  };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes start with ESC
const ANSI = /\u001b\[[0-9;]*m/g;

/** As a reader counts: "10 passed, 26 skipped, 0 failed". */
export const describeCounts = (c: TestCounts) => `${c.pass} passed, ${c.skipped} skipped, ${c.fail} failed`;

/** The last `n` non-empty-trailing lines of `text`, each cut at 500 characters. */
export function lastLines(text: string, n: number): string {
  const lines = text.replace(/\s+$/, "").split("\n");
  return lines
    .slice(-n)
    .map((l) => (l.length > 500 ? `${l.slice(0, 500)}…` : l))
    .join("\n");
}

/** The last line of stdout that parses as a JSON object. */
export function lastJsonObject(stdout: string): Record<string, unknown> | null {
  for (const line of stdout.trim().split("\n").reverse()) {
    const s = line.trim();
    if (!s.startsWith("{")) continue;
    try {
      const v = JSON.parse(s) as unknown;
      if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // not JSON: keep looking
    }
  }
  return null;
}

export function readCommandCheck(check: PlannedCheck, r: CommandResult): CheckReading {
  const output = `${r.stdout}\n${r.stderr}`;
  if (r.timedOut) {
    return {
      status: "error",
      coverage: "not_checked",
      metrics: {},
      detail: `timed out after ${check.timeoutSeconds} s`,
    };
  }
  const counts = testCounts(output);
  const metrics: Record<string, number> = {};
  if (counts) {
    Object.assign(metrics, { tests: counts.tests, passed: counts.pass, failed: counts.fail, skipped: counts.skipped });
  }
  if (check.metric) {
    const value = lastJsonObject(r.stdout)?.[check.metric.name];
    if (typeof value === "number" && Number.isFinite(value)) metrics[check.metric.name] = value;
  }
  if (r.exitCode !== 0) {
    return {
      status: "fail",
      coverage: "checked_supported",
      metrics,
      detail: `exited with ${r.exitCode ?? r.signal}${counts ? `; ${describeCounts(counts)}` : ""}`,
    };
  }
  if (!counts && isTestCheck(check)) {
    // A test check passes only on a test that ran; with no count nobody knows one did.
    return {
      status: "pass",
      coverage: "checked_no_signal",
      metrics,
      detail: r.truncated
        ? `the output passed the Sandbox's output cap and no test summary survived the cut; no test is known to have run`
        : "exited 0 but printed no test summary (`# tests N` or `ℹ tests N`); no test is known to have run",
    };
  }
  if (counts && counts.pass === 0)
    return {
      status: "pass",
      coverage: "checked_no_signal",
      metrics,
      detail: counts.tests === 0 ? "no test ran" : `no test ran: ${describeCounts(counts)}`,
    };
  if (check.metric && metrics[check.metric.name] === undefined) {
    return {
      status: "pass",
      coverage: "checked_no_signal",
      metrics,
      detail: `the command printed no ${check.metric.name}`,
    };
  }
  return {
    status: "pass",
    coverage: "checked_supported",
    metrics,
    detail: counts ? describeCounts(counts) : "passed",
  };
}

/**
 * The contract check: the composed route table must equal the base's with the Change's declared
 * contract changes applied (added routes present, removed routes gone, changed routes present).
 */
export function compareContract(
  base: readonly string[],
  composed: readonly string[],
  declared: { added: string[]; removed: string[]; changed: string[] },
): { ok: boolean; unexpected: string[]; missing: string[] } {
  const expected = new Set(base);
  for (const r of declared.added) expected.add(r);
  for (const r of declared.removed) expected.delete(r);
  const have = new Set(composed);
  const unexpected = [...have].filter((r) => !expected.has(r)).sort();
  const missing = [...expected].filter((r) => !have.has(r));
  for (const r of declared.changed) if (!have.has(r) && !missing.includes(r)) missing.push(r);
  missing.sort();
  return { ok: unexpected.length === 0 && missing.length === 0, unexpected, missing };
}

export function routesOf(stdout: string): string[] | null {
  const routes = lastJsonObject(stdout)?.routes;
  return Array.isArray(routes) && routes.every((r) => typeof r === "string") ? (routes as string[]) : null;
}
