import { unrecordedCheckState } from "@rhumbatron/core";
import type { ApprovalInterdiff, CandidateChecks, CandidateDetail, CandidateSummary, PromoteResult } from "./client.ts";
import { iso, table } from "./format.ts";

/** A Candidate as the CLI prints it: `candidates list`, `candidate show`, `candidate checks`, `promote`. */
export function formatCandidates(list: CandidateSummary[]): string {
  if (list.length === 0) return "no Candidates in this project";
  return table([
    // The Change's title last: the columns before it stay where scripts read them.
    ["ID", "STATUS", "CHANGE", "BASE", "TREE", "CREATED", "TITLE"],
    ...list.map((c) => [
      c.id,
      c.status,
      c.changeId,
      `gen ${c.baseGeneration}`,
      c.composedTree ?? "-",
      iso(c.createdAt),
      c.changeTitle ?? "-",
    ]),
  ]);
}

/** `candidate checks`: the checks file the Candidate was judged by, or the proposed one to commit. */
export function formatCandidateChecks(r: CandidateChecks): string {
  if (r.source === "none") return "no plan yet: the Candidate's checks have not been read";
  if (r.source === "file") return `checks from ${r.path} at the base (${r.commit})`;
  return [
    `# No .rhumbatron/checks.yml at the base (${r.commit}): these checks were detected from`,
    ...r.reasons.map((x) => `#   ${x}`),
    "# Commit this file as .rhumbatron/checks.yml to make them the project's checks.",
    r.proposal ?? "# (the proposed file is no longer stored)",
  ].join("\n");
}

export function formatCandidate(c: CandidateDetail, interdiff: ApprovalInterdiff = null): string {
  // The decision first: what a reader came to learn, then the details.
  return [
    ...headerLines(c),
    "",
    "plan:",
    ...planLines(c),
    "",
    "evidence:",
    ...evidenceLines(c),
    "",
    "gaps:",
    ...gapLines(c),
    "",
    ...formatConflictReview(c.conflictReview),
    "",
    ...approvalLines(c, interdiff),
  ].join("\n");
}

function headerLines(c: CandidateDetail): string[] {
  const lines: string[] = [
    `candidate ${c.id}: ${c.status}`,
    `  ${c.decision.headline}`,
    ...c.decision.reasons.map((r) => `    - ${r}`),
    ...decisionNext(c),
    "",
    `  change        ${c.changeId}`,
    `  base          generation ${c.baseGeneration} (${c.baseCommit})`,
    `  composed      commit ${c.composedCommit ?? "-"}`,
    `  tree hash     ${c.composedTree ?? "- (not composed yet)"}`,
    `  verification  ${c.verification ? `${c.verification.status} (started ${iso(c.verification.startedAt)}, finished ${iso(c.verification.finishedAt)})` : "not started"}`,
  ];
  if (c.promotion) {
    lines.push(
      `  promoted as   generation ${c.promotion.generation} by ${c.promotion.byName} at ${iso(c.promotion.at)}`,
    );
  } else if (c.promotedGeneration !== null) lines.push(`  promoted as   generation ${c.promotedGeneration}`);
  if (c.rejectionReason) lines.push(`  rejected      ${c.rejectionReason}`);
  return lines;
}

function planLines(c: CandidateDetail): string[] {
  const lines: string[] = [];
  if (!c.plan) lines.push("  none yet");
  else {
    const p = c.plan;
    lines.push(
      `  ${p.policyId} v${p.policyVersion}, risk ${p.riskTier}, human gate ${p.humanGate ? `yes (${p.humanGateReasons.join("; ")})` : "no"}`,
    );
    const s = p.checksSource;
    if (s) {
      lines.push(
        s.kind === "file"
          ? `  checks from ${s.path} at the base (${s.commit.slice(0, 10)})`
          : `  checks DETECTED (no checks file at the base): ${s.reasons.join("; ")}; the file to commit: rhumbatron candidate checks ${c.id}`,
      );
    }
    if (p.requires?.length) lines.push(`  requires ${p.requires.join(", ")}`);
    if (p.editsTheGate?.length) {
      lines.push(
        `  EDITS THE GATE: ${p.editsTheGate.join(", ")}; a person must approve, and its checks apply from the next generation`,
      );
    }
    for (const k of p.checks) {
      lines.push(
        `  - ${k.id} (${k.kind}, ${k.timeoutSeconds} s): ${k.argv ? k.argv.join(" ") : "not declared"}; ${k.reason}`,
      );
    }
  }
  return lines;
}

function evidenceLines(c: CandidateDetail): string[] {
  const lines: string[] = [];
  if (c.evidence.length === 0) lines.push("  none yet");
  for (const e of c.evidence) {
    // A reused record's check did not run here: it says so, and whose run it is
    // (docs/checks-file.md, Reused Evidence).
    const ran = e.reusedFrom
      ? `reused from ${e.reusedFrom.candidateId ?? e.reusedFrom.evidenceId} (did not run here)`
      : `${e.durationMs} ms`;
    lines.push(
      `  - ${e.checkId}: ${e.status}, ${e.coverage}, ${ran}${e.detail ? `; ${e.detail}` : ""}${e.outputKey ? ` [${e.outputKey}]` : ""}`,
    );
    // The failing tests of its report by name, each with its message's first line.
    for (const t of failingTests(e.tests)) lines.push(`    ✗ ${t}`);
    // A check that did not pass shows what ran and how its output ended, as a reader needs it.
    if (e.outputTail) {
      if (e.command) lines.push(`    $ ${e.command}`);
      lines.push(...e.outputTail.split("\n").map((l) => `    | ${l}`));
    }
  }
  return lines;
}

function gapLines(c: CandidateDetail): string[] {
  const lines: string[] = [];
  if (c.gaps.length === 0) lines.push(c.gate ? "  none" : "  the gate has not run");
  // A check with no Evidence is running, or stopped with its stale or cancelled Candidate, not missing.
  const unrecorded = unrecordedCheckState(c.status);
  for (const g of c.gaps) {
    if (unrecorded && (g.gap ?? "missing") === "missing") {
      lines.push(`  - ${g.checkId}: ${unrecorded.kind}; ${unrecorded.meaning}`);
      continue;
    }
    lines.push(`  - ${g.checkId}: ${g.gap}; ${g.detail}`);
    // The failure's first lines (the compiler error, the failing test), before anyone opens the log.
    lines.push(...(g.excerpt ?? []).map((l) => `      > ${l}`));
  }
  // Quarantined tests that failed and were let through: the gate names each (docs/flaky-tests.md).
  for (const q of c.gate?.quarantined ?? []) lines.push(`  quarantined, not blocking: ${q.checkId} › ${q.name}`);
  return lines;
}

function approvalLines(c: CandidateDetail, interdiff: ApprovalInterdiff): string[] {
  const lines: string[] = [];
  const open = c.decision.actions.includes("approve");
  // A pending approval of a Candidate that left verification is closed: nobody can decide it any more.
  const state =
    c.approval.state === "pending" && !open && c.decision.state !== "verifying" ? "closed" : c.approval.state;
  lines.push(`approval: ${state}${c.approval.required ? " (required)" : ""}`);
  const d = c.approval.decision;
  if (d)
    lines.push(
      `  ${d.decision} by ${c.people[d.decidedBy] ?? "a removed user"} at ${iso(d.decidedAt)} for tree ${d.treeHash}${d.note ? `: ${d.note}` : ""}`,
    );
  if (interdiff) lines.push(...formatInterdiff(interdiff).map((l) => `  ${l}`));
  if (open && c.composedTree) {
    lines.push(
      `  ${interdiff ? "approve again" : "approve"} with: rhumbatron candidate approve ${c.id} --tree ${c.composedTree}`,
    );
  }
  return lines;
}

/** The commands the decision allows, ready to copy; nothing for a state that allows none. */
function decisionNext(c: CandidateDetail): string[] {
  const a = c.decision.actions;
  const next: string[] = [];
  if (a.includes("approve") && c.composedTree)
    next.push(`rhumbatron candidate approve ${c.id} --tree ${c.composedTree}`);
  if (a.includes("promote")) next.push(`rhumbatron candidate promote ${c.id}`);
  if (a.includes("rerun")) next.push(`rhumbatron candidate rerun ${c.id} <checkId>`);
  if (a.includes("retry_tasks")) next.push(`rhumbatron task retry <taskId> (any Task of change ${c.changeId})`);
  return next.length ? [`  next: ${next.join("  |  ")}`] : [];
}

/**
 * The conflict review (docs/verification.md, Conflict reviews): its status, and each finding with
 * what it cites.
 * A supported blocking finding is a gap (listed above too); an unsupported one changes nothing.
 */
export function formatConflictReview(r: CandidateDetail["conflictReview"]): string[] {
  if (!r) return ["conflict review: none (no two Tasks changed the same file)"];
  const head = `conflict review: ${r.status}${r.model ? ` by ${r.model}` : ""}${r.reason ? `; ${r.reason}` : ""}`;
  if (r.status === "completed" && r.findings.length === 0) return [head, "  no findings"];
  return [
    head,
    ...r.findings.map((f) => {
      const kind = f.supported ? f.severity : `unsupported ${f.severity} (changes nothing)`;
      const cites = f.citations.map((c) => (c.found ? `${c.id} ${c.path}` : `${c.id} (no such item)`)).join(", ");
      return `  - ${kind}: ${f.message} [cites ${cites || "nothing"}]`;
    }),
  ];
}

/** "Since the last approval…": what an approver needs to approve a recomposed Candidate again. */
export function formatInterdiff(d: NonNullable<ApprovalInterdiff>): string[] {
  const own =
    d.ownDiff.unchanged === null
      ? "the Change's own diff could not be compared (a patch is missing or truncated)"
      : d.ownDiff.unchanged
        ? "the Change's own diff is unchanged"
        : `the Change's own diff changed in ${d.ownDiff.differingFiles.join(", ")}`;
  const under = d.base.files.filter((f) => f.underChange).map((f) => f.path);
  const lines = [
    `since ${d.since.approvedBy} approved ${d.since.candidateId} at ${iso(d.since.approvedAt)}:`,
    d.treeIdentical ? "  the composed tree is byte-identical (the approval carries over)" : `  ${own}`,
    d.base.promotions.length === 0
      ? "  the base did not move"
      : `  the base moved from generation ${d.base.fromGeneration} to ${d.base.toGeneration}: ${d.base.promotions
          .map((p) => `${p.changeId ?? p.candidateId ?? "?"}${p.title ? ` "${p.title}"` : ""}`)
          .join(", ")} changed ${d.base.files.length} file${d.base.files.length === 1 ? "" : "s"}`,
  ];
  if (under.length > 0) lines.push(`  files this Change also touches: ${under.join(", ")}`);
  return lines;
}

export function formatPromote(candidateId: string, r: PromoteResult): string {
  switch (r.outcome) {
    case "promoted":
      return `promoted ${candidateId}: canonical is now generation ${r.generation}`;
    case "alreadyPromoted":
      return `already promoted ${candidateId} (generation ${r.generation})`;
    case "blocked":
      return [`blocked: ${candidateId} cannot be promoted yet:`, ...r.blocks.map((b) => `  - ${b}`)].join("\n");
    case "stale":
      return `stale: canonical is at generation ${r.canonicalGeneration}, past ${candidateId}'s base; it cannot be promoted`;
  }
}
/** The failing tests of an Evidence record's report: "suite > name: first line of the message". */
function failingTests(tests: unknown): string[] {
  if (!Array.isArray(tests)) return [];
  return tests
    .filter((t): t is { name: string; suite?: string[]; status: string; message?: string | null } =>
      Boolean(t && typeof t === "object" && (t as { status?: unknown }).status === "failed"),
    )
    .map((t) => `${[...(t.suite ?? []), t.name].join(" > ")}${t.message ? `: ${t.message.split("\n")[0]}` : ""}`);
}
