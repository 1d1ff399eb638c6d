import { changedPolicyFields, describeAgentChoice, describeTranscriptStep, RISK_TIERS } from "@rhumbatron/core";
import type {
  LandingQueueEntry,
  LandingQueueStatus,
  LandingResult,
  PolicyUpdateResult,
  Project,
  ProjectDetail,
  ProjectPolicy,
  RunContextPacket,
  SandboxBudgetResult,
  SandboxMeter,
  TaskTranscripts,
  Whoami,
} from "./client.ts";
import type { Transition, WatchResult } from "./watch.ts";

/** Human-readable output of the CLI; `--json` prints the SDK's values instead. */

export const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString() : "-");

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
    ["#", "CHANGE", "WAITS FOR", "STACKED ON", "SINCE", "DETAIL"],
    ...list.map((e) => [
      String(e.position),
      e.changeId,
      e.ready ? "its turn" : e.waitingFor,
      // The speculative stack: the Change whose composed tree this one is verified on.
      e.stackedOn?.changeId ?? "-",
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
