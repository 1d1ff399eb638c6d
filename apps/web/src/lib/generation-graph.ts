import { gitGraphString } from "./mermaid-text.ts";

export interface GenerationPoint {
  generation: number;
  /** The promoted Candidate; null for S0, which comes from the project template. */
  candidateId: string | null;
}

/** At most this many generations are drawn; older ones are summed up in the first commit. */
export const MAX_DRAWN_GENERATIONS = 40;

/** `cand_3f2a9c1b…` for a label; the full ID stays in the list beside the graph. */
export function shortCandidateId(id: string): string {
  const match = /^(cand_[0-9a-f]{8})[0-9a-f]+$/.exec(id);
  return match?.[1] ? `${match[1]}…` : id;
}

/**
 * The canonical generation timeline as a mermaid gitGraph: one commit on `main` per generation
 * (S0, S1, …), each labelled with its generation and the Candidate it came from. Promotion is a
 * fast-forward of `main` to the composed commit, so the history is a straight line; the current
 * generation is highlighted and tagged.
 */
export function generationGitGraph(generations: readonly GenerationPoint[], current: number): string {
  const sorted = [...generations].sort((a, b) => a.generation - b.generation);
  const drawn = sorted.slice(-MAX_DRAWN_GENERATIONS);
  const hidden = sorted.length - drawn.length;
  const lines = ["gitGraph"];
  if (hidden > 0) lines.push(`  commit id: "${hidden} earlier generations" type: REVERSE`);
  for (const g of drawn) {
    const origin = g.candidateId ? shortCandidateId(g.candidateId) : "template";
    const id = gitGraphString(`S${g.generation} · ${origin}`);
    const isCurrent = g.generation === current;
    lines.push(`  commit id: "${id}"${isCurrent ? ` type: HIGHLIGHT tag: "canonical S${g.generation}"` : ""}`);
  }
  return lines.join("\n");
}
