import type { ResourceIntents } from "../work-graph/model.ts";
import { pathWithin } from "../work-graph/overlap.ts";
import type { CheckVerdict, GateResult } from "./gate.ts";

/**
 * Edits outside a Task's declared paths (docs/agents.md, Choosing the Agent): a command or program Agent
 * runs a program nobody reviewed, so what it changed outside the paths its Task declared is kept
 * on its ChangeSet (`outsidePaths`), shown on the Change page, and is a gap of the gate unless the
 * Agent was allowed to (`allowOutsidePaths`). A Task that declares no path has nothing to be
 * outside of.
 */
export function pathsOutside(paths: readonly string[], intents: ResourceIntents): string[] {
  const declared = [...intents.paths, ...intents.prefixes];
  if (declared.length === 0) return [];
  return paths.filter((p) => !declared.some((d) => pathWithin(p, d)));
}

/** The gate's check ID for these gaps (not a planned check: nothing runs for it). */
export const DECLARED_PATHS_CHECK = "declared-paths";

export function outsidePathGaps(
  changeSets: readonly { id: string; taskKey: string; outsidePaths: readonly string[] }[],
): CheckVerdict[] {
  return changeSets
    .filter((cs) => cs.outsidePaths.length > 0)
    .map((cs) => ({
      checkId: DECLARED_PATHS_CHECK,
      satisfied: false,
      gap: "outside_paths",
      evidenceId: cs.id,
      detail: `Task ${cs.taskKey} edited outside its declared paths: ${cs.outsidePaths.join(", ")} (retry it, or allow its Agent to edit outside its paths)`,
      excerpt: [],
    }));
}

/** The gate with those gaps: any makes the Candidate unpromotable. */
export function withOutsidePathGaps(gate: GateResult, changeSets: Parameters<typeof outsidePathGaps>[0]): GateResult {
  const gaps = outsidePathGaps(changeSets);
  if (gaps.length === 0) return gate;
  return { ...gate, promotable: false, verdicts: [...gate.verdicts, ...gaps], gaps: [...gate.gaps, ...gaps] };
}
