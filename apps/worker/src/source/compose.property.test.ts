import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComposeInput } from "./compose.ts";
import {
  commitFiles,
  compose,
  type Edit,
  edits,
  type Files,
  gitMergeAll,
  readFiles,
  tempRepo,
  treeOf,
} from "./compose-testing.ts";

/**
 * Builds a random Work Graph twice: once as the product does (every Task starts on a composition
 * of its transitive dependencies' ChangeSets; the Candidate composes all of them) and once with
 * command-line git only (every Task starts on git's merge of its transitive dependencies'
 * results, in topological order; the Candidate is git's merge of all results). Both must agree
 * on every start tree and the Candidate tree, or on where the first conflict is: the step, the
 * Task whose work could not be merged, and its conflicting paths.
 *
 * Why transitive dependencies, when git would merge the direct ones: a merge of results sees only
 * each side's net change, the composer sees each ChangeSet. Task 0 deletes b; Task 1 changes b's
 * mode; Task 4 (after 1) deletes b. Merging the results of 0 and 4 is clean to git (both delete
 * b), composing 0, 1, 4 is not (1 changed what 0 deleted), and git says the same when it merges
 * the results of 0, 1 and 4 in order, as it does for the Candidate.
 *
 * Why only the first conflicting Task's paths: git stops at a conflict, and any way of going on
 * (its conflict markers, or ours) differs from the composer's in what later work then touches.
 */
interface TaskSpec {
  deps: number[];
  edits: Edit[];
}
/** Where a build stopped: the start tree of every Task that started, then the Candidate's tree or the conflict. */
interface Outcome {
  starts: string[];
  tree?: string;
  conflict?: { step: number; task: number; paths: string[] };
}

const editArb: fc.Arbitrary<Edit> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant("add" as const), name: fc.nat(99), size: fc.integer({ min: 12, max: 20 }) }),
  },
  {
    weight: 6,
    arbitrary: fc
      .record({ op: fc.constant("edit" as const), file: fc.nat(99), at: fc.nat(99), del: fc.nat(2), ins: fc.nat(2) })
      .filter((e) => e.del + e.ins > 0),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("delete" as const), file: fc.nat(99) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("rename" as const), file: fc.nat(99), name: fc.nat(99) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("chmod" as const), file: fc.nat(99) }) },
);
const graphArb = fc.integer({ min: 2, max: 8 }).chain((n) =>
  fc.tuple(
    ...Array.from({ length: n }, (_, i) =>
      fc.record({
        deps: fc.subarray(Array.from({ length: i }, (_, j) => j)),
        edits: fc.array(editArb, { minLength: 1, maxLength: 4 }),
      }),
    ),
  ),
);

/**
 * Files are long compared with an edit (at most two lines out, two in), so that a renamed file
 * stays more than half like its merge-base version, which git needs to see a rename it did not
 * find exact. Below that git's view and the composer's part: Task 0 renames lib/c -> lib/d (a
 * file of 6 lines), Task 2 deletes 4 of its lines, and Task 5 also renames lib/c -> lib/d. The
 * composer knows lib/c is at lib/d, so 5's rename is the same as 0's and composes; git no
 * longer pairs lib/c with the 2 lines left at lib/d and reports a rename/delete conflict.
 */
const INITIAL: Record<string, [number, boolean]> = {
  "a.txt": [24, false],
  "b.txt": [20, true],
  "lib/a.txt": [24, false],
  "lib/c.txt": [20, false],
};
// Two repositories, so that neither build can see an object the other is still writing
// (isomorphic-git does not write objects atomically).
let product: Awaited<ReturnType<typeof tempRepo>>;
let oracle: Awaited<ReturnType<typeof tempRepo>>;
let initial: string;

beforeAll(async () => {
  [product, oracle] = [await tempRepo(), await tempRepo()];
  const files: Files = new Map();
  for (const [path, [n, executable]] of Object.entries(INITIAL)) {
    const text = Array.from({ length: n }, (_, k) => `${path} ${k}\n`).join("");
    files.set(path, { content: new TextEncoder().encode(text), executable });
  }
  initial = await commitFiles(product.gitdir, files, []);
  await commitFiles(oracle.gitdir, files, []);
});
afterAll(async () => {
  await product.cleanup();
  await oracle.cleanup();
});

const closure = (tasks: TaskSpec[], i: number): number[] => {
  const seen = new Set<number>();
  const visit = (t: number) => {
    for (const d of tasks[t]?.deps ?? []) if (!seen.has(d)) seen.add(d) && visit(d);
  };
  visit(i);
  return [...seen].sort((a, b) => a - b);
};

/**
 * Task i's edits on its start commit. No path is used again once it held a file in the Task's
 * lineage (its start tree, an ancestor's trees, the initial tree), or once any earlier Task
 * renamed a file away from it: git's merge has no break detection and finds renames between the
 * merge base and each side as a whole, while the composer follows each ChangeSet's own exact
 * renames, and a reused path makes the two tell different stories. Task 0 renames a -> e; Task 4
 * (after 0) renames e -> c and adds a new e: to git, from the initial tree, a went to c, so an
 * unrelated Task's rename a -> c is the same rename and merges cleanly, while the composer sees a
 * at e and reports a rename/rename conflict. Or: Task 1 renames d -> c, Task 2 (not after 1) adds
 * a new d, Task 3 (a sibling of 1) renames d -> c too: git merges cleanly and drops Task 2's d,
 * the composer renames Task 2's d onto c and reports a conflict there.
 */
async function runTask(
  gitdir: string,
  tasks: TaskSpec[],
  i: number,
  start: string,
  seen: Files[],
  movedAway: Set<string>,
) {
  const files = await readFiles(gitdir, start);
  const forbidden = new Set([
    ...files.keys(),
    ...Object.keys(INITIAL),
    ...closure(tasks, i).flatMap((d) => [...(seen[d]?.keys() ?? [])]),
    ...movedAway,
  ]);
  const result = edits(files, tasks[i]?.edits ?? [], `t${i}`, forbidden, movedAway);
  seen[i] = new Map([...files, ...result]);
  return commitFiles(gitdir, result, [start], `t${i}\n`);
}

async function viaComposer(tasks: TaskSpec[]): Promise<Outcome> {
  const sets: ComposeInput[] = [];
  const starts: string[] = [];
  const seen: Files[] = [];
  const movedAway = new Set<string>();
  for (let i = 0; i <= tasks.length; i++) {
    const deps = i < tasks.length ? closure(tasks, i) : tasks.map((_, j) => j);
    const r = await compose(
      product.gitdir,
      initial,
      deps.map((d) => sets[d] as ComposeInput),
    );
    if (!r.ok) {
      const task = Math.min(...r.conflicts.map((c) => Number(c.taskKey.slice(1))));
      const paths = r.conflicts.filter((c) => c.taskKey === `t${task}`).map((c) => c.path);
      return { starts, conflict: { step: i, task, paths: [...new Set(paths)].sort() } };
    }
    if (i === tasks.length) return { starts, tree: r.tree };
    starts.push(r.tree);
    const commit = await runTask(product.gitdir, tasks, i, r.commit, seen, movedAway);
    sets.push({ changeSetId: `cs${i}`, taskKey: `t${i}`, baseCommit: r.commit, commit });
  }
  throw new Error("unreachable");
}

async function viaGit(tasks: TaskSpec[]): Promise<Outcome> {
  const results: string[] = [];
  const starts: string[] = [];
  const seen: Files[] = [];
  const movedAway = new Set<string>();
  for (let i = 0; i <= tasks.length; i++) {
    const deps = i < tasks.length ? closure(tasks, i) : tasks.map((_, j) => j);
    const m = await gitMergeAll(oracle.gitdir, deps.length ? deps.map((d) => results[d] as string) : [initial]);
    if (m.conflict)
      return { starts, conflict: { step: i, task: deps[m.conflict.index] as number, paths: m.conflict.paths } };
    if (i === tasks.length) return { starts, tree: await treeOf(oracle.gitdir, m.commit) };
    starts.push(await treeOf(oracle.gitdir, m.commit));
    results.push(await runTask(oracle.gitdir, tasks, i, m.commit, seen, movedAway));
  }
  throw new Error("unreachable");
}

describe("composition against command-line git", () => {
  it("agrees with git on random Work Graphs: the same Candidate tree, or the same first conflict", async () => {
    const outcomes = { clean: 0, conflict: 0 };
    await fc.assert(
      fc.asyncProperty(graphArb, async (tasks) => {
        const [ours, git] = await Promise.all([viaComposer(tasks), viaGit(tasks)]);
        expect(ours).toEqual(git);
        outcomes[git.conflict ? "conflict" : "clean"]++;
      }),
      { numRuns: 200 },
    );
    // The generator must keep producing both kinds of cases, or the property tests little.
    expect(outcomes.clean).toBeGreaterThan(20);
    expect(outcomes.conflict).toBeGreaterThan(20);
  }, 600_000);
});
