import { isDeepStrictEqual } from "node:util";
import { Document, isMap, isSeq, type Node, type YAMLMap } from "yaml";
import { CHECKS_FILE, type ChecksFile, type DeclaredCheck, parseChecksFile } from "./checks-file.ts";
import { detectNode } from "./detect-node.ts";
import { detectGo, detectPython, detectRust } from "./detect-python-go-rust.ts";
import type { Finding } from "./detect-shared.ts";

/**
 * Checks proposed for a repository that has no checks file (checks-file.ts). Such a repository
 * must still be verified, so we read what is at its root (package.json, pyproject.toml, go.mod,
 * Cargo.toml, …), propose the checks its own tools already run, use them for the Candidate (marked
 * "detected") and show the proposed file so the team can commit it and own it from then on.
 *
 * Pure: the caller lists the tree and reads files; nothing here touches the disk, a process or the
 * network, so the same tree always gives the same proposal. It is deliberately plain: root files
 * only, each rule a thing a person can check by looking at the repository, and every check says
 * in the file why it is there. When nothing can be detected the answer is null, never an empty or
 * made-up gate: the caller blocks the Candidate and says the project needs a checks file.
 */

export interface DetectInput {
  /** Every path in the tree (posix, relative), e.g. from git ls-tree. */
  paths: readonly string[];
  /** The text of a file at the root or below, or null when absent/binary/too large. Only called for files we need. */
  read(path: string): Promise<string | null>;
}

export interface DetectedChecks {
  /** The proposal as the schema reads it (the same value `parseChecksFile(yaml)` gives). */
  file: ChecksFile;
  /** The proposed `.rhumbatron/checks.yml`: a header saying it was detected and from what, and why each check is there. */
  yaml: string;
  /** What the proposal rests on, one finding a line, e.g. "package-lock.json: npm ci". */
  reasons: string[];
}

export async function detectChecks(input: DetectInput): Promise<DetectedChecks | null> {
  const paths = new Set(input.paths.map((p) => p.replace(/^\.\//, "")));
  const findings = (
    await Promise.all([
      detectNode(paths, input.read),
      detectPython(paths, input.read),
      detectGo(paths),
      detectRust(paths),
    ])
  ).filter((f): f is Finding => f !== null);
  const checks = findings.flatMap((f) => f.checks);
  if (checks.length === 0) return null;

  const file = assemble(findings);
  const yaml = render(file, findings);
  const read = parseChecksFile(yaml);
  if (!read.ok)
    throw new Error(`detected checks do not pass the schema (a bug): ${JSON.stringify(read.problems)}\n${yaml}`);
  if (!isDeepStrictEqual(read.file, file.value))
    throw new Error(`detected checks do not read back as proposed (a bug):\n${yaml}`);
  return { file: read.file, yaml, reasons: findings.flatMap((f) => f.reasons) };
}

/** The file, with the comment of each check and step beside it (by index) for rendering. */
interface Assembled {
  value: ChecksFile;
  checkWhy: string[];
  setupWhy: string[];
}

/**
 * One file from every ecosystem found: requires and setup concatenated, each check under its first
 * id unless taken, and only the first build prepares the tree (the schema allows one; the others
 * still run as checks).
 */
function assemble(findings: readonly Finding[]): Assembled {
  const requires = [...new Set(findings.flatMap((f) => f.requires))];
  const registries = [...new Set(findings.flatMap((f) => f.registries ?? []))];
  const setup = findings.flatMap((f) => f.setup);
  const taken = new Set<string>();
  let prepared = false;
  const checks: DeclaredCheck[] = [];
  const checkWhy: string[] = [];
  for (const p of findings.flatMap((f) => f.checks)) {
    const id = taken.has(p.ids[0]) ? p.ids[1] : p.ids[0];
    taken.add(id);
    const { prepares, ...rest } = p.check;
    let why = p.why;
    const check: DeclaredCheck = { id, ...rest };
    if (prepares && !prepared) {
      check.prepares = true;
      prepared = true;
    } else if (prepares) {
      why += " Another check prepares the tree, so this one only has to pass.";
    }
    checks.push(check);
    checkWhy.push(why);
  }
  const value: ChecksFile = {
    version: 1,
    ...(requires.length ? { requires } : {}),
    ...(registries.length ? { registries } : {}),
    ...(setup.length ? { setup: setup.map((s) => s.step) } : {}),
    checks,
  };
  return { value, checkWhy, setupWhy: setup.map((s) => s.why) };
}

/** The YAML text, built as a document so comments sit on their nodes; argv and short lists in flow style. */
function render(file: Assembled, findings: readonly Finding[]): string {
  const doc = new Document(file.value);
  const from = [...new Set(findings.flatMap((f) => f.from))];
  doc.commentBefore = [
    ` Detected by Rhumbatron: the repository has no ${CHECKS_FILE},`,
    " so these checks were proposed from what is in it:",
    ` ${from.join(", ")}.`,
    ` Review them and commit this file as ${CHECKS_FILE};`,
    " from then on it, not detection, decides what verifies a Candidate.",
  ].join("\n");
  flowLeaves(doc.contents as Node);
  const setup = doc.get("setup", true);
  if (isSeq(setup)) for (const [i, n] of setup.items.entries()) setComment(n, file.setupWhy[i]);
  const checks = doc.get("checks", true);
  if (isSeq(checks)) for (const [i, n] of checks.items.entries()) setComment(n, file.checkWhy[i]);
  return doc.toString({ lineWidth: 0 });
}

/** Sequences of scalars (argv, requires, tiers) and small maps in them read best on one line. */
function flowLeaves(node: Node | null | undefined): void {
  if (isSeq(node)) {
    if (node.items.every((i) => !isMap(i) && !isSeq(i))) node.flow = true;
    else for (const i of node.items) flowLeaves(i as Node);
  } else if (isMap(node)) {
    for (const pair of (node as YAMLMap).items) flowLeaves(pair.value as Node);
    const report = node.get("report", true);
    if (isMap(report)) report.flow = true;
    const when = node.get("when", true);
    if (isSeq(when)) for (const rule of when.items) if (isMap(rule)) rule.flow = true;
  }
}

function setComment(node: unknown, why: string | undefined): void {
  if (why && isMap(node)) node.commentBefore = ` ${why}`;
}
