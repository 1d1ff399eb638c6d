import type { BlobStore } from "@rhumbatron/core";
import type { Db } from "../client.ts";

/**
 * Code search over a project's canonical source (docs/verification.md,
 * "Search index"). The worker's index.build builds one index per generation's tree with
 * `buildSearchIndex` and stores it as one blob at `searchIndexKey`: an inverted index of
 * identifiers and words -> (path, line). The API answers projects.search from the newest built
 * index with `searchProjectIndex`.
 */

/** Where the index of one tree of a project is stored, and the prefix of all of a project's indexes. */
export const searchIndexKey = (projectId: string, tree: string) => `index/${projectId}/${tree}/search.json`;
export const searchIndexPrefix = (projectId: string) => `index/${projectId}/`;

export interface SearchIndexDoc {
  version: 1;
  projectId: string;
  generation: number;
  tree: string;
  commit: string;
  files: string[];
  /** term -> flat [fileIndex, line, fileIndex, line, …], lines 1-based, in file then line order. */
  terms: Record<string, number[]>;
}

const WORD = /[A-Za-z_$][A-Za-z0-9_$]*/g;
const MAX_TERM = 64;

/** Lower-cased words of a text; identifiers also yield their camelCase and snake_case parts. */
export function termsOf(text: string, parts = true): Set<string> {
  const out = new Set<string>();
  const add = (w: string) => {
    const t = w.toLowerCase();
    if (t.length >= 2 && t.length <= MAX_TERM) out.add(t);
  };
  for (const [word] of text.matchAll(WORD)) {
    add(word);
    if (!parts) continue;
    for (const p of word.split(/[_$]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/)) if (p !== word) add(p);
  }
  return out;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Text is valid UTF-8 without NUL bytes; anything else is left out of the index. */
function textOf(bytes: Uint8Array): string | null {
  if (bytes.subarray(0, 8000).includes(0)) return null;
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

export function buildSearchIndex(
  files: { path: string; content: Uint8Array }[],
): Pick<SearchIndexDoc, "files" | "terms"> {
  const paths: string[] = [];
  const terms = new Map<string, number[]>();
  for (const f of files) {
    const text = textOf(f.content);
    if (text === null) continue;
    const fileIndex = paths.push(f.path) - 1;
    text.split("\n").forEach((line, i) => {
      for (const t of termsOf(line)) {
        const postings = terms.get(t);
        if (postings) postings.push(fileIndex, i + 1);
        else terms.set(t, [fileIndex, i + 1]);
      }
    });
  }
  return { files: paths, terms: Object.fromEntries([...terms].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
}

export interface SearchHit {
  path: string;
  line: number;
}
export interface SearchResult {
  generation: number;
  tree: string;
  /** Every matching line; `hits` holds the first `limit` of them. */
  total: number;
  hits: SearchHit[];
}

/**
 * Searches the project's newest built index: lines holding every word of the query, each word
 * matching as a prefix of an indexed term, case-insensitive. Null when no index is built yet.
 */
export async function searchProjectIndex(
  blobs: BlobStore,
  db: Db,
  projectId: string,
  query: string,
  opts: { limit?: number } = {},
): Promise<SearchResult | null> {
  const row = await db.projectIndex.findFirst({
    where: { projectId, status: "built" },
    orderBy: [{ generation: "desc" }, { createdAt: "desc" }],
  });
  const blob = row?.indexKey ? await blobs.get(row.indexKey) : null;
  if (!row || !blob) return null;
  const doc = JSON.parse(new TextDecoder().decode(blob.body)) as SearchIndexDoc;
  const words = [...termsOf(query, false)];
  let lines: Set<string> | undefined;
  for (const w of words) {
    const here = new Set<string>();
    for (const [term, postings] of Object.entries(doc.terms)) {
      if (!term.startsWith(w)) continue;
      for (let i = 0; i < postings.length; i += 2) here.add(`${postings[i]}:${postings[i + 1]}`);
    }
    const before: Set<string> | undefined = lines;
    lines = before ? new Set([...before].filter((l) => here.has(l))) : here;
  }
  const all = [...(lines ?? [])]
    .map((l) => l.split(":").map(Number) as [number, number])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .map(([f, line]) => ({ path: doc.files[f] as string, line }));
  const limit = opts.limit ?? 50;
  return { generation: row.generation, tree: row.tree ?? doc.tree, total: all.length, hits: all.slice(0, limit) };
}
