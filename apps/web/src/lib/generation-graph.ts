import { mermaidText } from "./mermaid-text.ts";

/** What the timeline knows of one canonical generation (the project overview's generations). */
export interface TimelineGeneration {
  generation: number;
  /** The promoted Candidate; null for S0, which comes from the project template. */
  candidateId: string | null;
  changeId?: string | null;
  changeTitle?: string | null;
  commit?: string;
  createdAt?: Date;
  /** By name: the person who promoted it, or the landing queue (null for S0). */
  promotedBy?: { kind: "user" | "system"; name: string } | null;
  approvedBy?: string | null;
}

/** At most this many generations are drawn; older ones are summed up in one node (the list has them all). */
export const MAX_DRAWN_GENERATIONS = 12;

/** How long a Change's title may be inside a node before it is cut (the list beside it has it whole). */
const NODE_TITLE_CHARS = 32;

/** `cand_3f2a9c1b…` for a label; the full ID stays in the list beside the graph. */
export function shortCandidateId(id: string): string {
  const match = /^(cand_[0-9a-f]{8})[0-9a-f]+$/.exec(id);
  return match?.[1] ? `${match[1]}…` : id;
}

/**
 * The canonical generation timeline as a mermaid flowchart, newest on top: one node per generation
 * (S0, S1, …) with the title of the Change it came from, written level in a box (never rotated), an
 * arrow from each generation to the next, and the current one highlighted. Promotion fast-forwards
 * `main`, so the history is one line.
 */
export function generationFlowchart(generations: readonly TimelineGeneration[], current: number): string {
  const sorted = [...generations].sort((a, b) => a.generation - b.generation);
  const drawn = sorted.slice(-MAX_DRAWN_GENERATIONS);
  const hidden = sorted.length - drawn.length;
  const lines = ["flowchart BT", "  classDef current fill:#d1fae5,stroke:#047857,color:#064e3b,font-weight:bold"];
  if (hidden > 0) lines.push(`  earlier["${hidden} earlier ${hidden === 1 ? "generation" : "generations"}"]`);
  for (const g of drawn) {
    const origin = g.candidateId
      ? mermaidText(g.changeTitle ?? shortCandidateId(g.candidateId), NODE_TITLE_CHARS)
      : "project template";
    lines.push(`  g${g.generation}["S${g.generation}<br/>${origin}"]${g.generation === current ? ":::current" : ""}`);
  }
  const ids = [...(hidden > 0 ? ["earlier"] : []), ...drawn.map((g) => `g${g.generation}`)];
  for (let i = 1; i < ids.length; i++) lines.push(`  ${ids[i - 1]} --> ${ids[i]}`);
  return lines.join("\n");
}

export interface TimelineRow {
  generation: number;
  label: string;
  current: boolean;
  candidateId: string | null;
  changeId: string | null;
  /** The Change's title, or what S0 came from. */
  change: string;
  /** Who promoted it, by name. */
  promotedBy: string;
  /** Who approved its tree, by name, when a person had to. */
  approvedBy: string | null;
  /** ISO time, and the same minute as people read it ("2026-03-10 14:25 UTC"). */
  at: string | null;
  time: string;
  commit: string;
  shortCommit: string;
}

/** "2026-03-10 14:25 UTC": the same on the server and in every browser. */
export function utcMinute(d: Date): string {
  return `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** The list beside the graph, newest first: generation, Change, promoted by, time, commit. */
export function generationRows(generations: readonly TimelineGeneration[], current: number): TimelineRow[] {
  return [...generations]
    .sort((a, b) => b.generation - a.generation)
    .map((g) => ({
      generation: g.generation,
      label: `S${g.generation}`,
      current: g.generation === current,
      candidateId: g.candidateId,
      changeId: g.changeId ?? null,
      change: g.candidateId ? (g.changeTitle ?? g.changeId ?? "a Change") : "the project template",
      promotedBy: g.candidateId ? (g.promotedBy?.name ?? "not recorded") : "provisioning",
      approvedBy: g.approvedBy ?? null,
      at: g.createdAt ? g.createdAt.toISOString() : null,
      time: g.createdAt ? utcMinute(g.createdAt) : "",
      commit: g.commit ?? "",
      shortCommit: (g.commit ?? "").slice(0, 10),
    }));
}
