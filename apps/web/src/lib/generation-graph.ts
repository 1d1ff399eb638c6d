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

export interface TimelineRow {
  generation: number;
  label: string;
  current: boolean;
  /** Where the row's node sits on the line of generations drawn down the table's first column. */
  rail: { newest: boolean; oldest: boolean };
  candidateId: string | null;
  changeId: string | null;
  /** The Change's title, whole, or what S0 came from. */
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

/**
 * The canonical generation timeline, newest first: one row per generation (generation, Change,
 * promoted by, time, commit). The line of generations is drawn in the rows themselves, one node a
 * row, so the drawing and the list always hold the same generations in the same order, level with
 * each other. Promotion fast-forwards `main`, so the history is one line: the newest row's line
 * starts at its node, the oldest row's ends there.
 */
export function generationRows(generations: readonly TimelineGeneration[], current: number): TimelineRow[] {
  const sorted = [...generations].sort((a, b) => b.generation - a.generation);
  return sorted.map((g, i) => ({
    generation: g.generation,
    label: `S${g.generation}`,
    current: g.generation === current,
    rail: { newest: i === 0, oldest: i === sorted.length - 1 },
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
