import { type Culprit, culpritText } from "@rhumbatron/core";
import type { ChangeCandidate, ChangeDetail } from "./client/types.ts";

/** `rhumbatron change show`: the Change, its Tasks, its newest Candidate and the Task that broke it. */
export function formatChange(c: ChangeDetail, candidates: readonly ChangeCandidate[]): string {
  const lines = [
    `change ${c.id}: ${c.title}`,
    `  status      ${c.status}`,
    `  risk        ${c.riskTier}`,
    "tasks:",
    ...c.tasks.map((t) => `  ${t.key.padEnd(12)} ${t.state.padEnd(10)} ${t.title}`),
  ];
  const newest = candidates[0];
  if (!newest) return [...lines, "candidate: none yet"].join("\n");
  lines.push(`candidate ${newest.id}: ${newest.status} (on generation ${newest.baseGeneration})`);
  if (newest.rejectionReason) lines.push(`  rejected    ${newest.rejectionReason}`);
  const culprit = newest.culprit as Culprit | null;
  if (culprit) {
    lines.push(`  ${culpritText(culprit)}`);
    for (const p of culprit.probes) {
      lines.push(`    prefix ${p.prefix}: ${p.failed ? "fails" : "passes"} (Evidence ${p.evidenceId})`);
    }
    if (culprit.task) lines.push(`  retry it with: rhumbatron task retry ${culprit.task.id}`);
  }
  lines.push(`  more: rhumbatron candidate show ${newest.id}`);
  return lines.join("\n");
}
