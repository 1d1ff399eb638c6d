import { OUTPUT_CUT_LINE } from "../sandbox/output-cut.ts";

/**
 * The first lines of a failure, from a check's whole output (pure): what a reader of a failed check
 * needs before opening the log. Knows the shapes of common tools' failures, never a project's:
 *
 * - TypeScript's compiler errors, plain (`file(l,c): error TSnnnn: …`) or pretty (`file:l:c - error TSnnnn: …`);
 * - node --test failures in TAP (`not ok N - name` and the `error:` of its YAML block; a suite's
 *   "subtests failed" is skipped) and in the spec reporter (`✖ name` and the error under it);
 * - otherwise generic lines: `…Error:`/`…Exception:`, `error:`, `FAIL`, `✗`;
 * - otherwise the last non-empty lines.
 *
 * npm's own lines (`npm ERR!`, `npm error`, `npm warn`) are never picked; colour codes are stripped;
 * at most `EXCERPT_MAX_LINES` lines, each cut at `EXCERPT_MAX_WIDTH` characters.
 *
 * A Sandbox output cut (`OUTPUT_CUT_LINE`, apps/worker/src/sandbox/run-capped.ts keeps the first
 * and the last half) must not make the excerpt lie: the possibly partial line on each side of a
 * cut is never picked, and where picked lines come after a cut (or either side of one) the excerpt
 * says so in a line of its own (`OUTPUT_CUT_NOTE`): an earlier failure may be in what was cut.
 */
export const EXCERPT_MAX_LINES = 6;
export const EXCERPT_MAX_WIDTH = 200;
export const OUTPUT_CUT_NOTE = "… (the Sandbox's output cap cut the output here) …";

interface Line {
  text: string;
  /** How many cuts come before this line. */
  seg: number;
  /** Next to a cut, so possibly partial: never picked. */
  partial: boolean;
}

interface Picked {
  text: string;
  seg: number;
}

interface Found {
  /** Index of the first failure's line. */
  at: number;
  /** One group per failure: its first line, then its message lines. */
  failures: Picked[][];
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: colour and cursor codes start with ESC
const ANSI = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)|[@-Z\\-_])/g;
const NPM_NOISE = /^npm (?:ERR!|error|warn|WARN|notice)(?:\s|$)/;
const STACK = /^at\s/;

export function failureExcerpt(output: string, maxLines = EXCERPT_MAX_LINES): string[] {
  const lines = linesOf(output);
  const found = [tscErrors(lines), tapFailures(lines), specFailures(lines)]
    .filter((f): f is Found => f !== null)
    .sort((a, b) => a.at - b.at)[0];
  const picked = found
    ? pickFailures(found.failures, maxLines)
    : (genericLines(lines, maxLines) ?? lastLines(lines, maxLines));
  return withCutNotes(picked, maxLines).map(cutWidth);
}

/**
 * The excerpt's first line for a one-line reason: its first line of output, marked `… ` when a
 * Sandbox cut came before it (an earlier failure may be missing); null for an empty excerpt.
 */
export function excerptHead(excerpt: readonly string[]): string | null {
  const i = excerpt.findIndex((l) => l !== OUTPUT_CUT_NOTE);
  const line = excerpt[i]?.trim();
  if (!line) return null;
  return i > 0 ? `… ${line}` : line;
}

function linesOf(output: string): Line[] {
  const raw = output.replace(ANSI, "").split("\n");
  const lines: Line[] = [];
  let seg = 0;
  let afterCut = false;
  for (const r of raw) {
    // A carriage return without a newline redraws the line: what stays on screen is its last part.
    const text = (r.endsWith("\r") ? r.slice(0, -1) : r).split("\r").at(-1)?.replace(/\s+$/, "") ?? "";
    if (OUTPUT_CUT_LINE.test(text.trim())) {
      const before = lines.at(-1);
      if (before) before.partial = true;
      seg += 1;
      afterCut = true;
      continue;
    }
    lines.push({ text: text.replace(/\t/g, "  "), seg, partial: afterCut });
    afterCut = false;
  }
  return lines;
}

const usable = (l: Line | undefined): l is Line => !!l && !l.partial && l.text.trim() !== "";
const indentOf = (s: string) => s.length - s.trimStart().length;
const pick = (l: Line, text = l.text.trim()): Picked => ({ text, seg: l.seg });

/** TypeScript: every error line; the first with its indented continuation lines (the chain of reasons). */
function tscErrors(lines: Line[]): Found | null {
  const TSC = /\berror TS\d+:/;
  const failures: Picked[][] = [];
  let at = -1;
  lines.forEach((l, i) => {
    if (!usable(l) || !TSC.test(l.text)) return;
    if (at < 0) at = i;
    const group = [pick(l)];
    for (let j = i + 1; j < lines.length; j++) {
      const next = lines[j];
      if (!usable(next) || indentOf(next.text) === 0 || TSC.test(next.text)) break;
      group.push(pick(next, `  ${next.text.trim()}`));
    }
    failures.push(group);
  });
  return at < 0 ? null : { at, failures };
}

/** node --test's TAP: `not ok` with its YAML block's error; a suite's `subtestsFailed` is no failure of its own. */
function tapFailures(lines: Line[]): Found | null {
  const NOT_OK = /^\s*not ok \d+\b/;
  const failures: Picked[][] = [];
  let at = -1;
  lines.forEach((l, i) => {
    if (!usable(l)) return;
    if (!NOT_OK.test(l.text)) return;
    const indent = indentOf(l.text);
    const yaml: Line[] = [];
    for (let j = i + 1; j < lines.length; j++) {
      const next = lines[j] as Line;
      if (next.text.trim() !== "" && indentOf(next.text) <= indent) break;
      yaml.push(next);
      if (next.text.trim() === "...") break;
    }
    if (yaml.some((y) => /^\s*failureType: '?subtestsFailed'?$/.test(y.text))) return;
    if (at < 0) at = i;
    failures.push([pick(l), ...yamlError(yaml)]);
  });
  return at < 0 ? null : { at, failures };
}

function yamlError(yaml: Line[]): Picked[] {
  const k = yaml.findIndex((y) => /^\s*error:/.test(y.text));
  const key = yaml[k];
  if (!key) return [];
  const value = key.text.trim().slice("error:".length).trim();
  if (!/^[|>][-+]?$/.test(value)) return usable(key) ? [pick(key, `  ${key.text.trim()}`)] : [];
  const out: Picked[] = [];
  for (const y of yaml.slice(k + 1)) {
    if (y.text.trim() !== "" && indentOf(y.text) <= indentOf(key.text)) break;
    if (usable(y)) out.push(pick(y, `  ${y.text.trim()}`));
  }
  return out;
}

/** node --test's spec reporter: `✖ name (…ms)` and the error printed under it, up to its stack. */
function specFailures(lines: Line[]): Found | null {
  const CROSS = /^\s*✖ (.+?)(?: \([\d.]+m?s\))?$/;
  const tests: { at: number; group: Picked[] }[] = [];
  const suites: { at: number; group: Picked[] }[] = [];
  const seen = new Set<string>();
  lines.forEach((l, i) => {
    if (!usable(l)) return;
    const name = CROSS.exec(l.text)?.[1];
    if (!name || name === "failing tests:") return;
    const indent = indentOf(l.text);
    const message: Picked[] = [];
    for (let j = i + 1; j < lines.length; j++) {
      const next = lines[j] as Line;
      if (next.text.trim() === "") continue;
      if (indentOf(next.text) <= indent || STACK.test(next.text.trim())) break;
      if (usable(next)) message.push(pick(next, `  ${next.text.trim()}`));
    }
    // The "failing tests:" summary repeats each failure once more.
    if (seen.has(name)) return;
    seen.add(name);
    // A suite's own line has nothing under it: a failure only when no test says more.
    (message.length ? tests : suites).push({ at: i, group: [pick(l), ...message] });
  });
  const chosen = tests.length ? tests : suites;
  const first = chosen[0];
  return first ? { at: first.at, failures: chosen.map((c) => c.group) } : null;
}

/** The first failure with up to three of its message lines, then the next failures' first lines. */
function pickFailures(failures: Picked[][], maxLines: number): Picked[] {
  const out: Picked[] = [];
  failures.forEach((group, n) => {
    for (const p of group.slice(0, n === 0 ? 4 : 2)) if (out.length < maxLines) out.push(p);
  });
  return out;
}

/** Lines that say error or failure in most tools' words, in order. */
function genericLines(lines: Line[], maxLines: number): Picked[] | null {
  const GENERIC = [
    /\b[A-Z]\w*(?:Error|Exception)\b(?: \[[A-Z0-9_]+\])?:/,
    /^\s*(?:error|ERROR|Error)(?:\[\w+\])?:/,
    /^\s*(?:FAIL|FAILED)\b/,
    /^\s*[✗✘×] /,
  ];
  const out: Picked[] = [];
  const seen = new Set<string>();
  for (const l of lines) {
    const t = l.text.trim();
    if (!usable(l) || NPM_NOISE.test(t) || STACK.test(t) || seen.has(t)) continue;
    if (!GENERIC.some((g) => g.test(l.text))) continue;
    seen.add(t);
    out.push(pick(l));
    if (out.length === maxLines) break;
  }
  return out.length ? out : null;
}

/** The last non-empty lines, npm's own lines left out unless nothing else was printed. */
function lastLines(lines: Line[], maxLines: number): Picked[] {
  const own = lines.filter((l) => usable(l) && !NPM_NOISE.test(l.text.trim()));
  return (own.length ? own : lines.filter(usable)).slice(-maxLines).map((l) => pick(l));
}

/** A line saying where the output was cut, before picked lines that come after a cut. */
function withCutNotes(picked: Picked[], maxLines: number): string[] {
  const out: string[] = [];
  let seg = 0;
  for (const p of picked) {
    if (p.seg !== seg && out.at(-1) !== OUTPUT_CUT_NOTE) out.push(OUTPUT_CUT_NOTE);
    seg = p.seg;
    out.push(p.text);
  }
  // Bounded, and never ending on the note: a note says something about the lines after it.
  const bounded = out.slice(0, maxLines);
  return bounded.at(-1) === OUTPUT_CUT_NOTE ? bounded.slice(0, -1) : bounded;
}

const cutWidth = (s: string) => (s.length > EXCERPT_MAX_WIDTH ? `${s.slice(0, EXCERPT_MAX_WIDTH - 1)}…` : s);
