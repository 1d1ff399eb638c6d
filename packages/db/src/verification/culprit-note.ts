import type { Culprit, GateResult } from "@rhumbatron/core";
import type { Db } from "../client.ts";

/**
 * What a retried Task's Agent is told when its ChangeSet was named the culprit of the Change's
 * newest Candidate (docs/flaky-tests.md, The culprit Task): which check broke, which tests, and how
 * the failure began. Null for any other Task.
 */
export async function culpritNoteFor(db: Db, changeId: string, taskKey: string): Promise<string | null> {
  const newest = await db.candidate.findFirst({
    where: { changeId },
    orderBy: { createdAt: "desc" },
    select: { id: true, culprit: true, gate: true },
  });
  const c = newest?.culprit as Culprit | null | undefined;
  if (!newest || !c?.task || c.task.key !== taskKey) return null;
  const gap = (newest.gate as GateResult | null)?.gaps.find((g) => g.checkId === c.checkId);
  return [
    `Your Task's previous ChangeSet broke the check ${c.checkId} of Candidate ${newest.id}: the Change's ChangeSets before it pass that check, and with it the check fails.`,
    c.tests.length ? `Failing tests: ${c.tests.join("; ")}` : "",
    gap ? `The check said: ${gap.detail}` : "",
    ...(gap?.excerpt ?? []),
    "Fix that failure in this attempt.",
  ]
    .filter(Boolean)
    .join("\n");
}
