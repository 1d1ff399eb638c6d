import type { CheckVerdict, GapKind, PlannedCheck, UnrecordedCheckState } from "@rhumbatron/core";
import { candidateStatusIn, unrecordedCheckState } from "@rhumbatron/core";

/**
 * How the Candidate page shows statuses, checks and gaps. Pure, so the one rule that matters is
 * tested: a gap is never shown green or as passing, whatever the Evidence record's own status says
 * (a `pass` that timed out, gave no signal or missed its metric is a gap).
 */
export type Tone = "pass" | "fail" | "warn" | "pending" | "neutral";

export const TONE_CLASSES: Record<Tone, string> = {
  pass: "border-emerald-200 bg-emerald-50 text-emerald-800",
  fail: "border-red-200 bg-red-50 text-red-800",
  warn: "border-amber-200 bg-amber-50 text-amber-900",
  pending: "border-sky-200 bg-sky-50 text-sky-800",
  neutral: "border-slate-200 bg-slate-100 text-slate-700",
};

export interface GapStyle {
  tone: Exclude<Tone, "pass">;
  label: string;
  /** What the gap means for the person reading the page. */
  meaning: string;
}

export const GAP_STYLES: Record<GapKind, GapStyle> = {
  missing: { tone: "warn", label: "Missing", meaning: "No Evidence was recorded for this check." },
  timed_out: { tone: "fail", label: "Timed out", meaning: "The check ran past its timeout." },
  skipped: { tone: "warn", label: "Skipped", meaning: "The check was skipped, so it proves nothing." },
  error: { tone: "fail", label: "Error", meaning: "The check could not run." },
  failed: { tone: "fail", label: "Failed", meaning: "The check ran and failed." },
  not_checked: { tone: "warn", label: "Not checked", meaning: "It passed without checking anything." },
  no_signal: { tone: "warn", label: "No signal", meaning: "It ran but its result says nothing either way." },
  expectation_not_met: {
    tone: "fail",
    label: "Expectation not met",
    meaning: "A reported metric missed the bound the plan sets.",
  },
  blocking_finding: {
    tone: "fail",
    label: "Blocking finding",
    meaning: "The conflict review found a defect and cited the Context Packet items it rests on.",
  },
  outside_paths: {
    tone: "fail",
    label: "Outside its paths",
    meaning:
      "A command or program Agent edited files outside the paths its Task declared, which it was not allowed to.",
  },
  flaky: {
    tone: "fail",
    label: "Flaky",
    meaning:
      "The failing tests also passed on this same tree: they are flaky, and a flaky failure does not pass. An admin may quarantine a test (rhumbatron tests quarantine).",
  },
};

/** Unknown gap kinds (a newer worker) still show as gaps, never as passing. */
export function gapStyle(kind: string): GapStyle {
  return GAP_STYLES[kind as GapKind] ?? { tone: "fail", label: kind, meaning: "An unrecognised gap." };
}

const EVIDENCE_TONE: Record<string, Tone> = { pass: "pass", fail: "fail", error: "fail", skipped: "warn" };

/**
 * The tone of one check row: the gate's verdict decides. Green only when the gate found no gap;
 * a gap takes its own style even when the record says `pass`.
 */
export function checkTone(row: { gap: string | null; satisfied: boolean; evidenceStatus: string | null }): Tone {
  if (row.gap !== null || !row.satisfied) return gapStyle(row.gap ?? "missing").tone;
  return row.evidenceStatus === null ? "pending" : (EVIDENCE_TONE[row.evidenceStatus] ?? "neutral");
}

/** A planned check with no Evidence, said by where its Candidate stands instead of as a gap. */
export interface UnrecordedCheck extends UnrecordedCheckState {
  tone: Tone;
  label: string;
}

/** core's unrecordedCheckState with the page's tone and label: running is pending, stopped neutral. */
export function unrecordedCheck(candidateStatus: string): UnrecordedCheck | null {
  const state = unrecordedCheckState(candidateStatus);
  if (!state) return null;
  return { ...state, tone: state.kind === "running" ? "pending" : "neutral", label: state.kind };
}

/** The tone of a single Evidence record's status badge (a record listed under its check). */
export function evidenceTone(status: string, isGap: boolean): Tone {
  const tone = EVIDENCE_TONE[status] ?? "neutral";
  return isGap && tone === "pass" ? "warn" : tone;
}

export const COVERAGE_LABELS: Record<string, string> = {
  not_checked: "not checked",
  checked_no_signal: "checked, no signal",
  checked_supported: "checked, supported",
};

const CANDIDATE_TONES: Record<string, Tone> = {
  created: "pending",
  verifying: "pending",
  verified: "pass",
  rejected: "fail",
  stale: "neutral",
  promoted: "pass",
};

export function candidateTone(status: string): Tone {
  return CANDIDATE_TONES[status] ?? "neutral";
}

/** Statuses after which the verification workflow changes nothing more by itself. */
export function isFinalStatus(status: string): boolean {
  return candidateStatusIn(status, "settled");
}

/** How often the page asks again while a Candidate is still being composed or verified. */
export const LIVE_REFETCH_MS = 2_000;

export function formatMs(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;
}

/** How long ago `then` was, as a list reads it: "just now", "5 min ago", "3 h ago", "2 d ago". */
export function ageLabel(then: Date, now: Date): string {
  const minutes = Math.floor((now.getTime() - then.getTime()) / 60_000);
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} d ago`;
}

/** "1.2 s of 120 s", with the share of the timeout used and whether it was passed. */
export function durationAgainstTimeout(durationMs: number, timeoutSeconds: number) {
  const limitMs = timeoutSeconds * 1_000;
  return {
    label: `${formatMs(durationMs)} of ${timeoutSeconds} s`,
    share: limitMs > 0 ? Math.min(durationMs / limitMs, 1) : 1,
    over: durationMs > limitMs,
  };
}

export interface EvidenceRow {
  id: string;
  checkId: string;
  status: string;
  completedAt: Date;
}

export interface CheckRow<E extends EvidenceRow> {
  checkId: string;
  check: PlannedCheck | null;
  verdict: CheckVerdict | null;
  /** Every record of this check, newest first; the one the gate judged is `verdict.evidenceId`. */
  evidence: E[];
}

/**
 * One row per planned check (in plan order) with its verdict and every Evidence record, then rows
 * for records of checks the plan does not name (shown, never counted as satisfying anything).
 */
export function checkRows<E extends EvidenceRow>(
  checks: readonly PlannedCheck[],
  verdicts: readonly CheckVerdict[],
  evidence: readonly E[],
): CheckRow<E>[] {
  const newestFirst = (id: string) =>
    evidence.filter((e) => e.checkId === id).sort((a, b) => b.completedAt.getTime() - a.completedAt.getTime());
  const planned = checks.map((check) => ({
    checkId: check.id,
    check,
    verdict: verdicts.find((v) => v.checkId === check.id) ?? null,
    evidence: newestFirst(check.id),
  }));
  const known = new Set<string>(checks.map((c) => c.id));
  const extra = [...new Set(evidence.map((e) => e.checkId))]
    .filter((id) => !known.has(id))
    .map((id) => ({ checkId: id, check: null, verdict: null, evidence: newestFirst(id) }));
  return [...planned, ...extra];
}

/**
 * How the conflict review's findings show (docs/verification.md, Conflict reviews). A supported
 * blocking finding
 * is a gap; an advisory one is shown for the approver; an unsupported one (a citation names no item
 * of the review's Context Packet) is shown as unsupported and never as a problem of the Candidate.
 */
export interface FindingStyle {
  tone: Tone;
  label: string;
  meaning: string;
}

export function findingStyle(f: { severity: string; supported: boolean }): FindingStyle {
  if (!f.supported) {
    return {
      tone: "neutral",
      label: `Unsupported ${f.severity}`,
      meaning: "It cites no valid item of the review's Context Packet, so it changes nothing.",
    };
  }
  if (f.severity === "blocking") {
    return { tone: "fail", label: "Blocking", meaning: "A gap: the Candidate cannot be promoted." };
  }
  return { tone: "warn", label: "Advisory", meaning: "For the approver to weigh; it blocks nothing." };
}

const REVIEW_STATUS: Record<string, { tone: Tone; text: string }> = {
  completed: { tone: "neutral", text: "reviewed" },
  failed: { tone: "warn", text: "review failed" },
  skipped: { tone: "neutral", text: "review skipped" },
};

/** The review's badge: a failed or skipped review is said so (it blocks nothing, and found nothing). */
export function reviewStatusBadge(status: string): { tone: Tone; text: string } {
  return REVIEW_STATUS[status] ?? { tone: "warn", text: status };
}
