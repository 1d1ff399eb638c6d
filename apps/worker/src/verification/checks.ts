import type { CommandResult, Coverage, EvidenceStatus, PlannedCheck } from "@rhumbatron/core";
import type { TestOutcome, TestReport } from "./reports.ts";

/**
 * Reading a command check's result (pure). A command that exits 0 passes; a check that names a test
 * report passes only on a report in which at least one test ran and none failed (reports.ts reads it
 * with a kept parser); a check with a metric only on a printed value. A timeout or a command that
 * could not run is an error with nothing checked, never a pass.
 */
export interface CheckReading {
  status: EvidenceStatus;
  coverage: Coverage;
  metrics: Record<string, number>;
  detail: string;
}

/** What the check's report gave: the report, why there is none, or nothing (the check names no report). */
export type ReportReading = { report: TestReport } | { unreadable: string } | null;

/** As a reader counts: "10 passed, 26 skipped, 0 failed". */
export const describeCounts = (c: TestReport["counts"]) =>
  `${c.passed} passed, ${c.skipped} skipped, ${c.failed} failed`;

/** The failing tests by name, with their first message line: "parser > numbers (expected 3, got 4)". */
export function describeFailing(tests: readonly TestOutcome[], max = 5): string {
  const failing = tests.filter((t) => t.status === "failed");
  const named = failing.slice(0, max).map((t) => {
    const message = t.message?.split("\n")[0]?.slice(0, 200);
    return `${[...t.suite, t.name].join(" > ")}${message ? ` (${message})` : ""}`;
  });
  const more = failing.length - named.length;
  return [...named, ...(more > 0 ? [`${more} more`] : [])].join("; ");
}

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

export function readCommandCheck(check: PlannedCheck, r: CommandResult, report: ReportReading = null): CheckReading {
  if (r.timedOut) {
    return {
      status: "error",
      coverage: "not_checked",
      metrics: {},
      detail: `timed out after ${check.timeoutSeconds} s`,
    };
  }
  const metrics: Record<string, number> = {};
  const counts = report && "report" in report ? report.report.counts : null;
  if (counts) {
    Object.assign(metrics, {
      tests: counts.tests,
      passed: counts.passed,
      failed: counts.failed,
      skipped: counts.skipped,
    });
  }
  if (check.metric) {
    const value = lastJsonObject(r.stdout)?.[check.metric.name];
    if (typeof value === "number" && Number.isFinite(value)) metrics[check.metric.name] = value;
  }
  const failing = report && "report" in report ? describeFailing(report.report.tests) : "";
  if (r.exitCode !== 0) {
    return {
      status: "fail",
      coverage: "checked_supported",
      metrics,
      detail: `exited with ${r.exitCode ?? r.signal}${counts ? `; ${describeCounts(counts)}` : ""}${failing ? `; failing: ${failing}` : ""}`,
    };
  }
  if (check.report) {
    if (!counts) {
      // A test check passes only on a test that ran; without its report nobody knows one did.
      return {
        status: "pass",
        coverage: "checked_no_signal",
        metrics,
        detail: `exited 0 but its ${check.report.format} report ${report && "unreadable" in report ? report.unreadable : "was not read"}; no test is known to have run`,
      };
    }
    if (counts.failed > 0) {
      return {
        status: "fail",
        coverage: "checked_supported",
        metrics,
        detail: `exited 0, but its report has failing tests: ${describeCounts(counts)}; failing: ${failing}`,
      };
    }
    if (counts.passed === 0) {
      return {
        status: "pass",
        coverage: "checked_no_signal",
        metrics,
        detail: counts.tests === 0 ? "no test ran" : `no test ran: ${describeCounts(counts)}`,
      };
    }
  }
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
