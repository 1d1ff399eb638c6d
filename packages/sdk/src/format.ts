import {
  changedPolicyFields,
  describeAgentChoice,
  describeTranscriptStep,
  RISK_TIERS,
  unrecordedCheckState,
} from "@rhumbatron/core";
import type {
  ApprovalInterdiff,
  CandidateChecks,
  CandidateDetail,
  CandidateSummary,
  LandingQueueEntry,
  LandingQueueStatus,
  LandingResult,
  PolicyUpdateResult,
  Project,
  ProjectDetail,
  ProjectPolicy,
  PromoteResult,
  RunContextPacket,
  SandboxBudgetResult,
  SandboxMeter,
  TaskTranscripts,
  Whoami,
} from "./client.ts";
import type { Transition, WatchResult } from "./watch.ts";

/** Human-readable output of the CLI; `--json` prints the SDK's values instead. */

const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString() : "-");

/** Left-aligned columns, two spaces apart. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

export function formatWhoami(w: Whoami): string {
  const t = w.tenant;
  return `tenant ${t.slug} (${t.tenantId}, ${t.name}) as ${t.role}`;
}

export function formatProjects(projects: Project[]): string {
  if (projects.length === 0) return "no projects in this tenant";
  return table([
    ["ID", "NAME", "STATUS", "GENERATION"],
    ...projects.map((p) => [p.id, p.name, p.status, String(p.canonicalGeneration)]),
  ]);
}

export function formatProject(p: ProjectDetail): string {
  const source =
    p.sourceKind === "import"
      ? `imported from ${p.sourceUrl}${p.sourceBranch ? ` (branch ${p.sourceBranch})` : " (its HEAD branch)"}`
      : p.sourceKind === "push"
        ? "pushed with git push"
        : "the project template";
  const lines = [
    `${p.id}  ${p.name}`,
    `  status      ${p.status}`,
    `  source      ${source}`,
    `  generation  S${p.canonicalGeneration}`,
    `  agent       ${describeAgentChoice(p.agent)}`,
  ];
  if (p.status === "failed") lines.push(`  failed      ${p.failureReason ?? "(no reason recorded)"}`);
  if (p.status === "awaiting_push")
    lines.push(
      `  waiting for a git push; rhumbatron projects push-access ${p.id} gives the command with a new one-time token`,
    );
  if (p.status === "provisioning") lines.push(`  (rhumbatron projects show ${p.id} again to see when it is ready)`);
  return lines.join("\n");
}

export function formatTransition(t: Transition): string {
  const from = t.from ?? "new";
  if (t.kind === "task") return `task ${t.key}: ${from} -> ${t.to}`;
  if (t.kind === "change") return `change: ${from} -> ${t.to}`;
  return `candidate ${t.id}: ${from} -> ${t.to}${t.note ? ` (${t.note})` : ""}`;
}

export function formatWatchEnd(r: WatchResult): string {
  const c = r.candidate;
  switch (r.outcome) {
    case "verified":
      return `verified: candidate ${c?.id}${c?.approvalRequired ? " waits for approval" : ""}; next: rhumbatron candidate show ${c?.id}`;
    case "promoted":
      return `promoted: candidate ${c?.id}`;
    case "rejected":
      return `rejected: candidate ${c?.id} did not pass; see why: rhumbatron candidate show ${c?.id}`;
    case "cancelled":
      return `cancelled: change ${r.change.id} was cancelled`;
    case "failed": {
      const stuck = r.tasks.filter((t) => t.state === "failed" || t.state === "blocked");
      const which = stuck.map((t) => `${t.key} ${t.state}${t.blockedLimit ? ` (${t.blockedLimit})` : ""}`).join(", ");
      return `failed: ${which}; nothing else can run (see the Change page, or Operations for dead letters)`;
    }
  }
}

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
  lines.push("", "plan:");
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
  lines.push("", "evidence:");
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
  lines.push("", "gaps:");
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
  lines.push("", ...formatConflictReview(c.conflictReview));
  const open = c.decision.actions.includes("approve");
  // A pending approval of a Candidate that left verification is closed: nobody can decide it any more.
  const state =
    c.approval.state === "pending" && !open && c.decision.state !== "verifying" ? "closed" : c.approval.state;
  lines.push("", `approval: ${state}${c.approval.required ? " (required)" : ""}`);
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
  return lines.join("\n");
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

const SOURCE = {
  tenant: "this tenant's own budget",
  setting: "the deployment's RHUMBATRON_SANDBOX_MONTHLY_SECONDS",
  default: "the default budget",
} as const;

const runs = (n: number) => `${n} run${n === 1 ? "" : "s"}`;

export function formatSandboxMeter(m: SandboxMeter): string {
  const b = m.budget;
  const setBy = b.updatedBy ? `, set by ${b.updatedBy.email ?? b.updatedBy.userId} at ${iso(b.updatedAt)}` : "";
  const kind = (k: string) => m.byKind.find((x) => x.kind === k);
  const lines = [
    `sandbox meter ${m.window} (tenant ${m.tenantId}, environment ${m.env}; the month is UTC)`,
    table([
      ["  used", `${m.usedSeconds} s`],
      ["  reserved", `${m.reservedSeconds} s${m.openReservations ? ` (${runs(m.openReservations)} open)` : ""}`],
      ["  budget", `${b.seconds} s (${SOURCE[b.source]}${setBy})`],
      ["  left", `${m.remainingSeconds} s`],
      [
        "  by kind",
        `agent ${kind("agent")?.seconds ?? 0} s (${runs(kind("agent")?.runs ?? 0)}), candidate ${kind("candidate")?.seconds ?? 0} s (${runs(kind("candidate")?.runs ?? 0)})`,
      ],
    ]),
  ];
  if (m.topChanges.length > 0) {
    lines.push(
      "most used by:",
      table(
        m.topChanges.map((c) => [
          `  ${c.changeId ?? "(no Change)"}`,
          c.title ?? "-",
          c.projectName ?? "-",
          `${c.seconds} s`,
          runs(c.runs),
        ]),
      ),
    );
  }
  lines.push("raise it (tenant admin): rhumbatron sandbox budget --set <seconds>");
  return lines.join("\n");
}

export function formatSandboxBudget(r: SandboxBudgetResult): string {
  const was = r.previousSeconds === null ? "none of its own" : `${r.previousSeconds} s`;
  const head = r.changed
    ? `budget set to ${r.meter.budget.seconds} s for tenant ${r.meter.tenantId} (was: ${was})`
    : `budget unchanged: tenant ${r.meter.tenantId} already has ${r.meter.budget.seconds} s`;
  return `${head}\n${r.belowUsage ? "warning: " : ""}${r.note}`;
}

export function formatLanding(changeId: string, r: LandingResult): string {
  const what = r.landWhenReady ? "lands when ready" : "does not land by itself";
  const now = r.changed ? what : `already ${what}`;
  return r.landWhenReady ? `change ${changeId} ${now}: ${r.state.detail}` : `change ${changeId} ${now}`;
}

export function formatContextPacket(r: RunContextPacket): string {
  const p = r.packet;
  if (!p) return `run ${r.runId} has recorded no Context Packet (it records one before its Agent starts)`;
  const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`;
  return [
    `${p.id} of run ${r.runId} (change ${r.changeId}): ${p.items.length} files, ${kb(p.budget.usedBytes)} of ${kb(p.budget.maxBytes)}, tree ${p.tree ?? "-"}, index ${p.indexSource}`,
    ...(p.note ? [p.note] : []),
    p.items.length
      ? table([["ID", "PATH", "SIZE", "WHY"], ...p.items.map((i) => [i.id, i.path, String(i.size), i.why])])
      : "no files",
    ...(p.omitted.length ? ["did not fit:", ...p.omitted.map((o) => `  ${o.path}: ${o.why}`)] : []),
  ].join("\n");
}

/** The queue's state in one line: running, or paused / draining since when. */
export function formatQueueStatus(s: LandingQueueStatus): string {
  if (s.state === "running") return "queue: running";
  const since = s.since ? ` since ${new Date(s.since).toISOString()}` : "";
  return s.state === "paused"
    ? `queue: paused${since}: nothing lands until an admin resumes it (rhumbatron queue resume)`
    : `queue: draining${since}: only what was verifying then lands (rhumbatron queue resume to go on)`;
}

export function formatLandingQueue(list: LandingQueueEntry[]): string {
  if (list.length === 0)
    return "the landing queue is empty (create a Change with --land, or: rhumbatron change land <id>)";
  return table([
    ["#", "CHANGE", "WAITS FOR", "SINCE", "DETAIL"],
    ...list.map((e) => [
      String(e.position),
      e.changeId,
      e.ready ? "its turn" : e.waitingFor,
      new Date(e.since).toISOString(),
      e.detail,
    ]),
  ]);
}

/** Who made a policy version, or that it is the defaults. */
const madeBy = (p: ProjectPolicy) =>
  p.implicit ? "the defaults; never edited" : `set by ${p.createdBy} at ${iso(p.createdAt)}`;

export function formatPolicy(p: ProjectPolicy): string {
  const d = p.document;
  const commands = Object.entries(d.commands);
  return [
    `${p.policyId} v${p.version} of project ${p.projectId} (${madeBy(p)})`,
    "required checks by risk tier, besides those the project's checks file applies:",
    table(
      RISK_TIERS.map((t) => [
        `  ${t}`,
        d.requiredChecksByRisk[t].length ? d.requiredChecksByRisk[t].join(", ") : "(what the checks file applies)",
      ]),
    ),
    `human gate: ${d.humanGateRiskTiers.length ? d.humanGateRiskTiers.join(", ") : "no tier (only changes that touch authorization)"}`,
    `commands: ${commands.length ? "these, the checks file's for the other checks" : "the checks file's for every check"}`,
    ...(commands.length ? [table(commands.map(([id, argv]) => [`  ${id}`, (argv ?? []).join(" ")]))] : []),
    `timeouts: ${
      Object.entries(d.timeoutSeconds)
        .map(([id, s]) => `${id} ${s} s`)
        .join(", ") || "the checks file's"
    }`,
    `rerun budget: ${d.rerunBudget} per check`,
    `p95 limit: ${d.p95LimitMs} ms`,
    `edit it: rhumbatron policy show ${p.projectId} --json > policy.json, change it, then rhumbatron policy set ${p.projectId} --file policy.json`,
  ].join("\n");
}

export function formatPolicyUpdate(r: PolicyUpdateResult): string {
  if (!r.changed) return `unchanged: ${r.policyId} v${r.version} of project ${r.projectId} already is this policy`;
  return `${r.policyId} v${r.version} of project ${r.projectId} (was v${r.previousVersion}; changed ${r.changedFields.join(", ")}); Candidates planned under v${r.previousVersion} can no longer be promoted`;
}

export function formatPolicyHistory(list: ProjectPolicy[]): string {
  return table([
    ["VERSION", "SET BY", "AT", "CHANGED"],
    ...list.map((p, i) => {
      const before = list[i + 1];
      const changed = p.implicit
        ? "the defaults"
        : before
          ? changedPolicyFields(before.document, p.document).join(", ")
          : "-";
      return [`v${p.version}`, p.createdBy ?? "-", iso(p.createdAt), changed];
    }),
  ]);
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

/** A Task's runs and their transcripts, for `rhumbatron task transcript`. */
export function formatTaskTranscripts(r: TaskTranscripts): string {
  if (r.runs.length === 0) return `task ${r.taskKey} (${r.taskId}): no Agent run yet`;
  const out: string[] = [];
  for (const run of r.runs) {
    const s = run.summary;
    out.push(`run ${run.runId}: ${run.status}${s ? `, ${s.program} ${s.version}` : ""}`);
    if (run.error) out.push(`  ${run.error.split("\n").join("\n  ")}`);
    if (s) {
      const cost = s.costUsd !== null ? `, $${s.costUsd.toFixed(4)}` : "";
      out.push(`  tokens ${s.inputTokens} in, ${s.outputTokens} out${cost}`);
      out.push(`  reached ${s.reached.join(", ") || "nothing"}; refused ${s.refused.join(", ") || "nothing"}`);
    }
    if (!run.steps) {
      out.push(
        s ? "  (its steps are no longer stored)" : "  (no transcript: not a program Agent, or it never started)",
      );
      continue;
    }
    for (const step of run.steps) {
      const { what, detail } = describeTranscriptStep(step);
      const line = detail.replace(/\s+/g, " ").trim();
      out.push(`  ${what.padEnd(16)} ${line.length > 160 ? `${line.slice(0, 159)}…` : line}`);
    }
  }
  return out.join("\n");
}
