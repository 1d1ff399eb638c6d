import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { composeChangeSets } from "./compose.ts";
import {
  AT,
  changeSet,
  commitFiles,
  compose,
  type File,
  type Files,
  file,
  filesOf,
  gitCli,
  gitMergeAll,
  parentsOf,
  readFiles,
  tempRepo,
  textOf,
  treeOf,
  WHO,
} from "./compose-testing.ts";

let repo: Awaited<ReturnType<typeof tempRepo>>;
let gitdir: string;
let s0: string;
const lines = (n: number, tag = "line") => Array.from({ length: n }, (_, i) => `${tag} ${i + 1}\n`).join("");
/** Replaces line `n` (1-based) of a file's text. */
const setLine = (f: Files, path: string, n: number, to: string) => {
  const ls = (textOf(f.get(path)) ?? "").split("\n");
  ls[n - 1] = to;
  f.set(path, file(ls.join("\n"), f.get(path)?.executable));
};
const move = (f: Files, from: string, to: string) => {
  f.set(to, f.get(from) as File);
  f.delete(from);
};
const ref = (key: string) => ({ changeSetId: `cs-${key}`, taskKey: key });

async function filesAfter(sets: Parameters<typeof compose>[2]) {
  const r = await compose(gitdir, s0, sets);
  if (!r.ok) throw new Error(`unexpected conflict: ${JSON.stringify(r.conflicts)}`);
  return { ...r, files: await readFiles(gitdir, r.commit) };
}

beforeAll(async () => {
  repo = await tempRepo();
  gitdir = repo.gitdir;
  s0 = await commitFiles(
    gitdir,
    filesOf({ "README.md": "# shop\n", "src/cart.ts": lines(10), "src/list.ts": lines(6) }),
    [],
  );
});
afterAll(() => repo.cleanup());

describe("composing ChangeSets", () => {
  it("a chain replays each Task's diff in order into one commit on top of onto", async () => {
    const a = await changeSet(gitdir, "a", s0, (f) => f.set("src/pay.ts", file("pay\n")));
    const b = await changeSet(gitdir, "b", a.commit, (f) => f.set("src/pay.ts", file("pay\nrefund\n")));
    const c = await changeSet(gitdir, "c", b.commit, (f) => f.delete("README.md"));
    const r = await filesAfter([a, b, c]);
    expect(textOf(r.files.get("src/pay.ts"))).toBe("pay\nrefund\n");
    expect(r.files.has("README.md")).toBe(false);
    expect(r.paths).toEqual(["README.md", "src/pay.ts"]);
    expect(await parentsOf(gitdir, r.commit)).toEqual([s0]);
    expect(r.tree).toBe(await treeOf(gitdir, c.commit));
  });

  it("a plain join {a, b} -> c composes both parents' work and c's own", async () => {
    const a = await changeSet(gitdir, "a", s0, (f) => setLine(f, "src/cart.ts", 2, "cart a"));
    const b = await changeSet(gitdir, "b", s0, (f) => f.set("src/b.ts", file("b\n")));
    const join = await compose(gitdir, s0, [a, b]);
    if (!join.ok) throw new Error("join conflicted");
    const c = await changeSet(gitdir, "c", join.commit, (f) => setLine(f, "src/list.ts", 1, "list c"));
    const r = await filesAfter([a, b, c]);
    expect(textOf(r.files.get("src/cart.ts"))).toContain("cart a\n");
    expect(textOf(r.files.get("src/b.ts"))).toBe("b\n");
    expect(textOf(r.files.get("src/list.ts"))?.startsWith("list c\n")).toBe(true);
  });

  it("a diamond a -> b, a -> c, {b, c} -> d composes cleanly, as command-line git merges it", async () => {
    // Criss-cross merge bases are what made repeated isomorphic-git merges fail here.
    const a = await changeSet(gitdir, "a", s0, (f) => setLine(f, "src/cart.ts", 5, "cart a"));
    const b = await changeSet(gitdir, "b", a.commit, (f) => setLine(f, "src/cart.ts", 1, "cart b"));
    const c = await changeSet(gitdir, "c", a.commit, (f) => setLine(f, "src/cart.ts", 9, "cart c"));
    const start = await compose(gitdir, s0, [a, b, c]);
    if (!start.ok) throw new Error("d cannot start");
    const d = await changeSet(gitdir, "d", start.commit, (f) => setLine(f, "src/cart.ts", 3, "cart d"));
    const r = await filesAfter([a, b, c, d]);
    const cart = textOf(r.files.get("src/cart.ts"))?.split("\n");
    expect([cart?.[0], cart?.[2], cart?.[4], cart?.[8]]).toEqual(["cart b", "cart d", "cart a", "cart c"]);
    const git = await gitMergeAll(gitdir, [b.commit, c.commit, d.commit]);
    expect(git.conflict).toBeUndefined();
    expect(r.tree).toBe(await treeOf(gitdir, git.commit));
  });

  it("a wide fan-in of 6 Tasks into one join composes every Task's work", async () => {
    const six = [];
    for (let i = 1; i <= 6; i++) {
      six.push(
        await changeSet(gitdir, `t${i}`, s0, (f) =>
          i <= 3 ? setLine(f, "src/cart.ts", i * 3, `cart t${i}`) : f.set(`src/t${i}.ts`, file(`t${i}\n`)),
        ),
      );
    }
    const start = await compose(gitdir, s0, six);
    if (!start.ok) throw new Error("join cannot start");
    const join = await changeSet(gitdir, "join", start.commit, (f) => f.delete("src/t4.ts"));
    const r = await filesAfter([...six, join]);
    expect(textOf(r.files.get("src/cart.ts"))).toBe(lines(10).replace(/^line (3|6|9)$/gm, (_, n) => `cart t${n / 3}`));
    expect([...r.files.keys()].filter((p) => /t\d/.test(p))).toEqual(["src/t5.ts", "src/t6.ts"]);
  });

  it("non-overlapping hunks of one file from two Tasks both land", async () => {
    const a = await changeSet(gitdir, "a", s0, (f) => setLine(f, "src/cart.ts", 2, "two a"));
    const b = await changeSet(gitdir, "b", s0, (f) => setLine(f, "src/cart.ts", 8, "eight b"));
    const r = await filesAfter([a, b]);
    expect(textOf(r.files.get("src/cart.ts"))?.split("\n")).toEqual([
      ...["line 1", "two a", "line 3", "line 4", "line 5", "line 6", "line 7", "eight b", "line 9", "line 10", ""],
    ]);
  });

  it("the same lines changed differently conflict and name both Tasks; every conflicting path is reported", async () => {
    const a = await changeSet(gitdir, "a", s0, (f) => {
      setLine(f, "src/cart.ts", 4, "four a");
      setLine(f, "src/list.ts", 1, "one a");
    });
    const b = await changeSet(gitdir, "b", s0, (f) => {
      setLine(f, "src/cart.ts", 4, "four b");
      setLine(f, "src/list.ts", 2, "two b"); // touches a's line 1: git's xdiff conflicts too
    });
    const r = await compose(gitdir, s0, [a, b]);
    expect(r).toEqual({
      ok: false,
      conflicts: [
        { path: "src/cart.ts", ...ref("b"), kind: "content", with: [ref("a")] },
        { path: "src/list.ts", ...ref("b"), kind: "content", with: [ref("a")] },
      ],
    });
    expect((await gitMergeAll(gitdir, [a.commit, b.commit])).conflict?.paths).toEqual(["src/cart.ts", "src/list.ts"]);
  });

  it("a delete against an edit conflicts in either order", async () => {
    const a = await changeSet(gitdir, "a", s0, (f) => f.delete("src/list.ts"));
    const b = await changeSet(gitdir, "b", s0, (f) => setLine(f, "src/list.ts", 3, "three b"));
    const conflict = (by: string, other: string) => ({
      ok: false,
      conflicts: [{ path: "src/list.ts", ...ref(by), kind: "delete_edit", with: [ref(other)] }],
    });
    expect(await compose(gitdir, s0, [a, b])).toEqual(conflict("b", "a"));
    expect(await compose(gitdir, s0, [b, a])).toEqual(conflict("a", "b"));
  });

  it("a rename carries another Task's edit of the old path, in either order", async () => {
    const a = await changeSet(gitdir, "a", s0, (f) => move(f, "src/cart.ts", "src/basket.ts"));
    const b = await changeSet(gitdir, "b", s0, (f) => setLine(f, "src/cart.ts", 7, "seven b"));
    const ab = await filesAfter([a, b]);
    const ba = await filesAfter([b, a]);
    expect(ab.tree).toBe(ba.tree);
    expect(ab.files.has("src/cart.ts")).toBe(false);
    expect(textOf(ab.files.get("src/basket.ts"))).toContain("seven b\n");
    expect(ab.tree).toBe(await treeOf(gitdir, (await gitMergeAll(gitdir, [a.commit, b.commit])).commit));
  });

  it("a rename against a delete conflicts at the new path, where git reports it", async () => {
    const a = await changeSet(gitdir, "a", s0, (f) => move(f, "src/cart.ts", "src/basket.ts"));
    const b = await changeSet(gitdir, "b", s0, (f) => f.delete("src/cart.ts"));
    for (const [first, second] of [
      [a, b],
      [b, a],
    ] as const) {
      const r = await compose(gitdir, s0, [first, second]);
      expect(r).toEqual({
        ok: false,
        conflicts: [{ path: "src/basket.ts", ...ref(second.taskKey), kind: "rename", with: [ref(first.taskKey)] }],
      });
    }
    expect((await gitMergeAll(gitdir, [a.commit, b.commit])).conflict?.paths).toEqual(["src/basket.ts"]);
  });

  it("a file renamed into a directory of its own name keeps another Task's edit", async () => {
    const a = await changeSet(gitdir, "a", s0, (f) => move(f, "src/list.ts", "src/list.ts/index.ts"));
    const b = await changeSet(gitdir, "b", s0, (f) => setLine(f, "src/list.ts", 2, "two b"));
    const r = await filesAfter([b, a]);
    expect(textOf(r.files.get("src/list.ts/index.ts"))).toContain("two b\n");
    expect(r.tree).toBe(await treeOf(gitdir, (await gitMergeAll(gitdir, [a.commit, b.commit])).commit));
  });

  it("reports the conflicts of every ChangeSet, not only the first one's", async () => {
    const a = await changeSet(gitdir, "a", s0, (f) => {
      setLine(f, "src/cart.ts", 1, "one a");
      f.delete("README.md");
    });
    const b = await changeSet(gitdir, "b", s0, (f) => setLine(f, "src/cart.ts", 1, "one b"));
    const c = await changeSet(gitdir, "c", s0, (f) => f.set("README.md", file("# shop c\n")));
    const r = await compose(gitdir, s0, [a, b, c]);
    expect(r.ok ? [] : r.conflicts.map((x) => [x.path, x.taskKey, x.kind])).toEqual([
      ["README.md", "c", "delete_edit"],
      ["src/cart.ts", "b", "content"],
    ]);
  });

  it("the executable bit merges three-way apart from the content", async () => {
    const a = await changeSet(gitdir, "a", s0, (f) =>
      f.set("src/list.ts", { ...(f.get("src/list.ts") as File), executable: true }),
    );
    const b = await changeSet(gitdir, "b", s0, (f) => setLine(f, "src/list.ts", 6, "six b"));
    const r = await filesAfter([a, b]);
    expect(r.files.get("src/list.ts")?.executable).toBe(true);
    expect(textOf(r.files.get("src/list.ts"))).toContain("six b\n");
  });

  it("a binary file changed by two Tasks differently conflicts; changed by one it is taken", async () => {
    const bin = (n: number) => file(new Uint8Array([0x89, 0, 1, 2, n]));
    const base = await commitFiles(gitdir, new Map([...(await readFiles(gitdir, s0)), ["logo.png", bin(0)]]), [s0]);
    const a = await changeSet(gitdir, "a", base, (f) => f.set("logo.png", bin(1)));
    const b = await changeSet(gitdir, "b", base, (f) => f.set("logo.png", bin(2)));
    const c = await changeSet(gitdir, "c", base, (f) => setLine(f, "src/cart.ts", 1, "one c"));
    expect(await compose(gitdir, base, [a, b])).toMatchObject({
      ok: false,
      conflicts: [{ path: "logo.png", kind: "binary" }],
    });
    const r = await compose(gitdir, base, [a, c]);
    expect(r.ok && (await readFiles(gitdir, r.commit)).get("logo.png")?.content).toEqual(bin(1).content);
  });

  it("is deterministic: the same inputs give the same commit id", async () => {
    const a = await changeSet(gitdir, "a", s0, (f) => setLine(f, "src/cart.ts", 2, "two a"));
    const b = await changeSet(gitdir, "b", s0, (f) => f.set("src/new.ts", file("new\n")));
    const first = await compose(gitdir, s0, [a, b]);
    const second = await compose(gitdir, s0, [a, b]);
    expect(first.ok && second.ok && first.commit === second.commit).toBe(true);
  });

  it("an empty ChangeSet changes nothing; with nothing at all to change the result is onto itself", async () => {
    const empty = await changeSet(gitdir, "empty", s0, () => {});
    expect(await compose(gitdir, s0, [empty])).toEqual({
      ok: true,
      commit: s0,
      tree: await treeOf(gitdir, s0),
      paths: [],
    });
    const b = await changeSet(gitdir, "b", s0, (f) => f.set("src/new.ts", file("new\n")));
    expect(await compose(gitdir, s0, [empty, b])).toEqual(await compose(gitdir, s0, [b]));
  });

  it("files added at one path by two Tasks conflict unless they are the same", async () => {
    const a = await changeSet(gitdir, "a", s0, (f) => f.set("src/new.ts", file("a\n")));
    const b = await changeSet(gitdir, "b", s0, (f) => f.set("src/new.ts", file("b\n")));
    const same = await changeSet(gitdir, "same", s0, (f) => f.set("src/new.ts", file("a\n")));
    expect(await compose(gitdir, s0, [a, b])).toMatchObject({
      ok: false,
      conflicts: [{ kind: "add_add", with: [ref("a")] }],
    });
    expect((await compose(gitdir, s0, [a, same])).ok).toBe(true);
  });
});

describe("files everyone appends to (the checks file's appendOnly)", () => {
  /** `git merge-file --union`: command-line git's union merge of one file, the oracle. */
  async function gitUnion(base: string, ours: string, theirs: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "rh-union-"));
    try {
      for (const [name, text] of Object.entries({ base, ours, theirs })) await writeFile(join(dir, name), text);
      const r = await gitCli(gitdir, [
        "merge-file",
        "--union",
        "-p",
        join(dir, "ours"),
        join(dir, "base"),
        join(dir, "theirs"),
      ]);
      if (r.code !== 0) throw new Error(`git merge-file --union failed (${r.code}): ${r.stderr}`);
      return r.stdout;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it("two ChangeSets adding a line at the same place keep both, the earlier first, as git's union merge; elsewhere it is still a conflict", async () => {
    const log = "# Changes\n- first\n";
    const s1 = await commitFiles(gitdir, filesOf({ "CHANGELOG.md": log, "src/cart.ts": lines(3) }), [s0]);
    const a = await changeSet(gitdir, "a", s1, (f) => {
      f.set("CHANGELOG.md", file(`${log}- from a\n`));
      setLine(f, "src/cart.ts", 2, "cart a");
    });
    const b = await changeSet(gitdir, "b", s1, (f) => {
      f.set("CHANGELOG.md", file(`${log}- from b\n`));
    });
    const appendOnly = (path: string) => path === "CHANGELOG.md";
    const r = await composeChangeSets(gitdir, s1, [a, b], { message: "compose\n", author: WHO, at: AT, appendOnly });
    if (!r.ok) throw new Error(`conflicted: ${JSON.stringify(r.conflicts)}`);
    const merged = textOf((await readFiles(gitdir, r.commit)).get("CHANGELOG.md"));
    expect(merged).toBe(`${log}- from a\n- from b\n`);
    expect(merged).toBe(await gitUnion(log, `${log}- from a\n`, `${log}- from b\n`));
    // Without the file named, the same ChangeSets conflict, as command-line git says.
    const strict = await compose(gitdir, s1, [a, b]);
    expect(strict.ok ? [] : strict.conflicts.map((c) => c.path)).toEqual(["CHANGELOG.md"]);
    expect((await gitMergeAll(gitdir, [a.commit, b.commit])).conflict?.paths).toEqual(["CHANGELOG.md"]);
    // A file not named append-only still conflicts when both sides change the same line.
    const c = await changeSet(gitdir, "c", s1, (f) => setLine(f, "src/cart.ts", 2, "cart c"));
    const other = await composeChangeSets(gitdir, s1, [a, c], { message: "m\n", author: WHO, at: AT, appendOnly });
    expect(other.ok ? [] : other.conflicts.map((x) => x.path)).toEqual(["src/cart.ts"]);
  });
});
