import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  CHECKS_FILE,
  type ChecksFile,
  describeChecksFileProblems,
  detectChecks,
  type ProjectChecks,
  parseChecksFile,
} from "@rhumbatron/core";
import type { TreeEntry } from "../source/git-objects.ts";

/** How the worker reads one commit of a repository: its files, and a file's bytes. */
export interface CommitReader {
  files(): Promise<TreeEntry[]>;
  read(oid: string): Promise<Uint8Array>;
}

/**
 * A project's checks at one commit (the Candidate's base: what the Candidate is judged by is never
 * the Candidate's own): its checks file, or, without one, the checks detected from what the
 * repository holds, with the file that would declare them. A file that does not parse, and a
 * repository in which nothing can be detected, are refusals that say what to do; never an empty
 * plan called verified.
 */
export type ChecksAtCommit =
  | { ok: true; project: ProjectChecks; proposal: string | null }
  | { ok: false; reason: string; lines: string[] };

/** Files larger than this are not read for detection (a lockfile is not needed, only its presence). */
const DETECT_READ_MAX_BYTES = 512 * 1024;

export async function checksAtCommit(
  commit: string,
  reader: CommitReader,
  proposalKey: string,
): Promise<ChecksAtCommit> {
  const files = await reader.files();
  const byPath = new Map(files.map((f) => [f.path, f]));
  const text = async (path: string) => {
    const f = byPath.get(path);
    if (!f || f.size > DETECT_READ_MAX_BYTES) return null;
    const bytes = await reader.read(f.oid);
    return bytes.includes(0) ? null : new TextDecoder().decode(bytes);
  };
  const declared = byPath.get(CHECKS_FILE);
  if (declared) {
    const content = await text(CHECKS_FILE);
    if (content === null) {
      return {
        ok: false,
        reason: `${CHECKS_FILE} at the base is not a text file`,
        lines: [`${CHECKS_FILE}: not text`],
      };
    }
    const reading = parseChecksFile(content);
    if (reading.ok) {
      return {
        ok: true,
        project: { source: { kind: "file", path: CHECKS_FILE, commit }, file: reading.file },
        proposal: null,
      };
    }
    const lines = describeChecksFileProblems(reading.problems).split("\n");
    return { ok: false, reason: `${CHECKS_FILE} at the base does not parse; fix it on main`, lines };
  }
  const detected = await detectChecks({ paths: files.map((f) => f.path), read: text });
  if (!detected) {
    return {
      ok: false,
      reason: `no ${CHECKS_FILE} at the base, and no checks could be detected (no package.json scripts, pytest, go.mod or Cargo.toml)`,
      lines: [`add ${CHECKS_FILE} declaring the project's checks (docs/checks-file.md)`],
    };
  }
  return {
    ok: true,
    project: { source: { kind: "detected", commit, reasons: detected.reasons, proposalKey }, file: detected.file },
    proposal: detected.yaml,
  };
}

/**
 * A tool's version from what `<tool> --version` printed: the first dotted number ("Python 3.11.2"
 * gives 3.11.2, "v20.20.2" gives 20.20.2); null when it printed none.
 */
export function versionIn(output: string): string | null {
  return /(\d+(?:\.\d+)*)/.exec(output)?.[1] ?? null;
}

/** Whether `version` is at least `atLeast`, part by part (20.3 >= 20, 3.9 < 3.11). */
export function atLeast(version: string, least: string): boolean {
  const a = version.split(".").map(Number);
  const b = least.split(".").map(Number);
  for (let i = 0; i < b.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y;
  }
  return true;
}

/** The checks file of the checkout in `dir` when it parses; null otherwise (nothing is append-only then). */
export async function checksFileInCheckout(dir: string): Promise<ChecksFile | null> {
  const text = await readFile(join(dir, CHECKS_FILE), "utf8").catch(() => null);
  if (text === null) return null;
  const reading = parseChecksFile(text);
  return reading.ok ? reading.file : null;
}
