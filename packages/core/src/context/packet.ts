import { z } from "zod";
import { targetedTests } from "../verification/plan.ts";
import type { ResourceIntents } from "../work-graph/model.ts";

/**
 * The Context Packet (docs/protocol.md, Context Packets and model findings: Agents read the file index
 * instead of walking the repo; model findings cite Context Packet item IDs): what a model is given to read, as a list of items, each a file
 * version with a stable ID (`ctx_<n>`), its path, Git blob ID, size and why it was picked, within a
 * size budget. An Agent run's packet is picked from the base tree's index.json and the Task; a
 * conflict review's from the versions of the files two Tasks both changed. Pure: the worker reads
 * the index and the blobs, records the packet, and hands it to the model.
 */

/** source/<project>/<tree>/index.json as the code store writes it (validated when read: it is a stored blob). */
export const fileIndexSchema = z.object({
  projectId: z.string().min(1),
  commit: z.string().min(1),
  tree: z.string().min(1),
  files: z.array(
    z.object({
      path: z.string().min(1),
      blob: z.string().min(1),
      size: z.number().int().nonnegative(),
      /** Whether the code store holds a copy (files over its size limit are listed, not copied). */
      stored: z.boolean(),
    }),
  ),
});
export type FileIndex = z.infer<typeof fileIndexSchema>;

export const CONTEXT_PURPOSES = ["agent_run", "conflict_review"] as const;
export type ContextPurpose = (typeof CONTEXT_PURPOSES)[number];

/**
 * Where an Agent packet's index came from: `stored` read from the blob store, `built` when it was
 * missing for the tree and the run published it first (the same code store step provisioning
 * runs); `none` for a packet that is not picked from an index (a conflict review's).
 */
export type IndexSource = "stored" | "built" | "none";

export interface ContextItem {
  /** `ctx_<n>`, unique within its packet; what a finding cites. */
  id: string;
  path: string;
  blob: string;
  size: number;
  why: string;
}

export interface ContextBudget {
  /** Sum of the picked items' sizes. */
  maxBytes: number;
  maxItems: number;
}

export interface ContextPacket {
  id: string;
  purpose: ContextPurpose;
  /** The tree the items describe: the run's base tree, or the Candidate's composed tree. */
  tree: string | null;
  indexSource: IndexSource;
  /** Why the index was built, or anything else a reader of the packet should know. */
  note: string | null;
  items: ContextItem[];
  /** What was picked but did not fit the budget (never listed as items, so never citable). */
  omitted: { path: string; why: string }[];
  budget: ContextBudget & { usedBytes: number };
}

/**
 * An Agent reads what its packet lists with read_file, so the budget bounds what it is pointed at,
 * not what it may open: about a quarter of the default token budget if it read every item.
 */
export const AGENT_PACKET_BUDGET: ContextBudget = { maxBytes: 200_000, maxItems: 40 };

/** What a packet for an Agent run is picked from, besides the index. */
export interface PacketTask {
  title: string;
  intents: ResourceIntents;
  /** Paths the Task's recorded edit plan names (the scripted Agent's; empty for a model's Task). */
  planPaths: readonly string[];
}

/** Words too common in Task titles to say which file a Task is about. */
const STOPWORDS = new Set(
  "a an and the to of in on for with from into by at is be it its as or not add make update change fix remove use file files code new".split(
    " ",
  ),
);

/** A path's words: its segments split at `/ . - _` and camelCase, lowercased. */
function pathWords(path: string): Set<string> {
  const spaced = path.replace(/([a-z0-9])([A-Z])/g, "$1 $2");
  return new Set(spaced.split(/[^A-Za-z0-9]+/).map((w) => w.toLowerCase()));
}

function titleWords(title: string): string[] {
  const words = title.toLowerCase().split(/[^a-z0-9]+/);
  return [...new Set(words.filter((w) => w.length >= 3 && !STOPWORDS.has(w)))];
}

/**
 * Picks an Agent run's items from the index, most relevant first, each with its reason: the paths
 * the Task declares, the paths its edit plan names, files under its declared prefixes, files whose
 * name carries a word of its title, the tests of what was picked so far, then the project's README
 * and package.json. Within a reason, by path. Items are taken in that order until the budget is
 * reached; the rest is listed as omitted. Declared paths the index lacks (files to create) are noted.
 */
export function buildAgentPacket(
  id: string,
  index: FileIndex,
  task: PacketTask,
  o: { indexSource: Exclude<IndexSource, "none">; note?: string | null; budget?: ContextBudget },
): ContextPacket {
  const byPath = new Map(index.files.map((f) => [f.path, f]));
  const paths = [...byPath.keys()].sort();
  const picked = new Map<string, string>();
  const pick = (path: string, why: string) => {
    if (byPath.has(path) && !picked.has(path)) picked.set(path, why);
  };
  for (const p of [...task.intents.paths].sort()) pick(p, "a path the Task declares");
  for (const p of [...task.planPaths].sort()) pick(p, "a path the Task's edit plan names");
  for (const prefix of [...task.intents.prefixes].sort()) {
    for (const p of paths) if (p.startsWith(prefix)) pick(p, `under ${prefix}, a prefix the Task declares`);
  }
  const words = titleWords(task.title);
  for (const p of paths) {
    const hit = words.find((w) => pathWords(p).has(w));
    if (hit) pick(p, `its name carries "${hit}" from the Task's title`);
  }
  const tests =
    targetedTests(
      [...picked.keys()],
      paths.filter((p) => /\.test\.[tj]sx?$/.test(p)),
    ) ?? [];
  for (const p of tests) pick(p, "a test of a picked file");
  for (const p of ["README.md", "package.json"]) pick(p, "the project's overview");

  const budget = o.budget ?? AGENT_PACKET_BUDGET;
  const missing = task.intents.paths.filter((p) => !byPath.has(p));
  const notes = [
    o.note ?? null,
    missing.length ? `declared but not in the index (new files): ${missing.join(", ")}` : null,
  ];
  const fitted = fit(
    [...picked].map(([path, why]) => ({
      path,
      blob: byPath.get(path)?.blob ?? "",
      size: byPath.get(path)?.size ?? 0,
      why,
    })),
    budget,
  );
  return {
    id,
    purpose: "agent_run",
    tree: index.tree,
    indexSource: o.indexSource,
    note: notes.filter(Boolean).join("; ") || null,
    ...fitted,
  };
}

/** One version of one file a conflict review is asked about. */
export interface ReviewVersion {
  path: string;
  blob: string;
  size: number;
  /** Which version it is, in words: "the base (generation 3)", "Task a's version (cs_…)", "the composed version". */
  why: string;
}

/**
 * A conflict review's ContextBudget: the versions are sent in full (the model calls no tools), so
 * the budget bounds the prompt. A file's versions go in together or not at all: half of a
 * comparison would let a finding cite what the model could not weigh.
 */
export const REVIEW_PACKET_BUDGET: ContextBudget = { maxBytes: 96_000, maxItems: 40 };

export function buildReviewPacket(
  id: string,
  tree: string | null,
  files: readonly { path: string; versions: readonly ReviewVersion[] }[],
  budget: ContextBudget = REVIEW_PACKET_BUDGET,
): ContextPacket {
  const items: Omit<ContextItem, "id">[] = [];
  const omitted: ContextPacket["omitted"] = [];
  let usedBytes = 0;
  for (const f of [...files].sort((a, b) => a.path.localeCompare(b.path))) {
    const bytes = f.versions.reduce((n, v) => n + v.size, 0);
    if (usedBytes + bytes > budget.maxBytes || items.length + f.versions.length > budget.maxItems) {
      omitted.push({ path: f.path, why: `its ${f.versions.length} versions do not fit the review's budget` });
      continue;
    }
    usedBytes += bytes;
    items.push(...f.versions);
  }
  return {
    id,
    purpose: "conflict_review",
    tree,
    indexSource: "none",
    note: null,
    items: items.map((it, i) => ({ id: contextItemId(i + 1), ...it })),
    omitted,
    budget: { ...budget, usedBytes },
  };
}

export const contextItemId = (n: number) => `ctx_${n}`;

/** Takes items in order while they fit; numbers them ctx_1… in that order. */
function fit(
  candidates: Omit<ContextItem, "id">[],
  budget: ContextBudget,
): Pick<ContextPacket, "items" | "omitted" | "budget"> {
  const items: ContextItem[] = [];
  const omitted: ContextPacket["omitted"] = [];
  let usedBytes = 0;
  for (const c of candidates) {
    if (items.length >= budget.maxItems || usedBytes + c.size > budget.maxBytes) {
      omitted.push({
        path: c.path,
        why: `${c.why}; over the budget of ${budget.maxItems} items, ${budget.maxBytes} bytes`,
      });
      continue;
    }
    usedBytes += c.size;
    items.push({ id: contextItemId(items.length + 1), ...c });
  }
  return { items, omitted, budget: { ...budget, usedBytes } };
}

/** The IDs a finding may cite. */
export function contextItemIds(packet: Pick<ContextPacket, "items">): Set<string> {
  return new Set(packet.items.map((i) => i.id));
}
