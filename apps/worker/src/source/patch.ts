import * as fs from "node:fs";
import { createTwoFilesPatch } from "diff";
import git from "isomorphic-git";
import { listFiles } from "./git-objects.ts";

/**
 * A unified diff between two commits of one repository, in git's layout (`diff --git a/… b/…`),
 * made with jsdiff per changed file. Binary files are named, not inlined.
 */
export interface CommitDiff {
  patch: string;
  paths: string[];
}

const isBinary = (b: Uint8Array) => b.subarray(0, 8000).includes(0);

async function text(gitdir: string, oid: string | undefined): Promise<Uint8Array | null> {
  if (!oid) return null;
  return (await git.readBlob({ fs, gitdir, oid })).blob;
}

export async function diffCommits(gitdir: string, from: string, to: string): Promise<CommitDiff> {
  const [a, b] = await Promise.all([listFiles(gitdir, from), listFiles(gitdir, to)]);
  const before = new Map(a.map((e) => [e.path, e.oid]));
  const after = new Map(b.map((e) => [e.path, e.oid]));
  const paths = [...new Set([...before.keys(), ...after.keys()])].filter((p) => before.get(p) !== after.get(p)).sort();
  const parts: string[] = [];
  for (const path of paths) {
    const oldBlob = await text(gitdir, before.get(path));
    const newBlob = await text(gitdir, after.get(path));
    const header = `diff --git a/${path} b/${path}\n${oldBlob ? "" : "new file mode 100644\n"}${newBlob ? "" : "deleted file mode 100644\n"}`;
    if ((oldBlob && isBinary(oldBlob)) || (newBlob && isBinary(newBlob))) {
      parts.push(
        `${header}Binary files ${oldBlob ? `a/${path}` : "/dev/null"} and ${newBlob ? `b/${path}` : "/dev/null"} differ\n`,
      );
      continue;
    }
    const body = createTwoFilesPatch(
      oldBlob ? `a/${path}` : "/dev/null",
      newBlob ? `b/${path}` : "/dev/null",
      oldBlob ? new TextDecoder().decode(oldBlob) : "",
      newBlob ? new TextDecoder().decode(newBlob) : "",
      "",
      "",
      { context: 3 },
    );
    // jsdiff starts with an "Index"/"====" banner; git's format starts at the --- line.
    parts.push(header + body.slice(body.indexOf("--- ")).replace(/\t$/gm, ""));
  }
  return { patch: parts.join(""), paths };
}
