import { XMLParser, XMLValidator } from "fast-xml-parser";
import { Parser as TapParser, type Result as TapResult } from "tap-parser";

/**
 * Reading a test run's report into per-test outcomes (pure: text in, outcomes out). The report is
 * parsed by a kept parser, fast-xml-parser for JUnit XML and tap-parser (node-tap's own) for TAP;
 * this module only maps what they give to our types, so one test reads the same whichever runner
 * wrote it. Nothing is guessed that the report does not say: a file is the one a `file` attribute
 * names, never one made up from a class name.
 */

export type TestStatus = "passed" | "failed" | "skipped";

export interface TestOutcome {
  /** Stable across runs of the same test: file + suite path + name, joined with " > ". */
  id: string;
  file: string | null;
  /** The test's own name. */
  name: string;
  /** Enclosing suite/describe names, outermost first. */
  suite: string[];
  /** Errored tests count as failed; skipped and todo as skipped. */
  status: TestStatus;
  durationMs: number | null;
  /** Failure message (first line(s) of failure/error, cut at 2000 chars); null unless failed. */
  message: string | null;
}

export interface TestReport {
  format: "junit" | "tap";
  /** Failing first, then in report order; at most MAX_KEPT_TESTS of them. */
  tests: TestOutcome[];
  /** Every test in the report, kept or not. */
  counts: { tests: number; passed: number; failed: number; skipped: number };
}

/** A report that cannot be read as the format it claims; the message says what is wrong. */
export class ReportUnreadable extends Error {
  override name = "ReportUnreadable";
}

/**
 * A report keeps this many tests at most (failures first), so one of a huge suite stays small
 * enough to store and show; its counts still count them all.
 */
export const MAX_KEPT_TESTS = 5_000;

/** A failure message is cut to this many characters: enough for an assertion and a few frames. */
export const MAX_MESSAGE_CHARS = 2_000;

/**
 * Longer text is refused before parsing: both parsers hold the whole report in memory, and no
 * test run we read writes anywhere near this much.
 */
export const MAX_REPORT_CHARS = 50_000_000;

/** Reads `text` as the report format the check declared. */
export function readReport(format: "junit" | "tap", text: string): TestReport {
  if (format === "junit") return readJUnit(text);
  if (format === "tap") return readTap(text);
  throw new ReportUnreadable(`unknown report format: ${JSON.stringify(format)}`);
}

// ---------------------------------------------------------------------------------------------
// JUnit XML

/**
 * fast-xml-parser's ordered output: one object per node, the tag name as its only key besides
 * ":@" (the attributes). Order matters here: a suite's test cases and nested suites interleave,
 * and the report's order is the order a reader expects.
 */
type XmlNode = Record<string, unknown> & { ":@"?: Record<string, string> };

const xmlParser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  // Names and messages stay text: "1.10" is a test name, not a number.
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  // Numeric character references (pytest writes a message's newlines as &#10;).
  htmlEntities: true,
});

/**
 * Reads JUnit XML as vitest, jest-junit, pytest, Playwright, Node's junit reporter and most CI
 * tools write it: a `<testsuites>` root or a lone `<testsuite>`, suites nested in suites, and test
 * cases directly under `<testsuites>` (Node's reporter puts top-level tests there).
 */
export function readJUnit(xml: string): TestReport {
  checkSize(xml);
  const text = xml.replace(/^\uFEFF/, "");
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    const { msg, line, col } = valid.err;
    throw new ReportUnreadable(`malformed XML: ${msg} (line ${line}${col ? `, column ${col}` : ""})`);
  }
  let nodes: XmlNode[];
  try {
    nodes = xmlParser.parse(text) as XmlNode[];
  } catch (e) {
    throw new ReportUnreadable(`malformed XML: ${e instanceof Error ? e.message : String(e)}`);
  }
  const root = nodes.find((n) => tagOf(n) !== null && tagOf(n) !== "?xml");
  const rootTag = root ? tagOf(root) : null;
  if (!root || (rootTag !== "testsuites" && rootTag !== "testsuite" && rootTag !== "testcase")) {
    throw new ReportUnreadable(
      `not JUnit XML: no <testsuite> or <testcase> element${rootTag ? ` (the root is <${rootTag}>)` : ""}`,
    );
  }
  const out = new Collector("junit");
  walkJUnit(root, [], null, out);
  return out.report();
}

/** The tag of an ordered node; null for text, comments and the like. */
function tagOf(node: XmlNode): string | null {
  for (const key of Object.keys(node)) {
    if (key !== ":@" && !key.startsWith("#")) return key;
  }
  return null;
}

function childrenOf(node: XmlNode, tag: string): XmlNode[] {
  const kids = node[tag];
  return Array.isArray(kids) ? (kids as XmlNode[]) : [];
}

function attr(node: XmlNode, name: string): string | null {
  const v = node[":@"]?.[name];
  return typeof v === "string" ? v : null;
}

/** The text inside an element, CDATA included. */
function textOf(node: XmlNode, tag: string): string {
  let text = "";
  for (const kid of childrenOf(node, tag)) {
    const t = kid["#text"];
    if (typeof t === "string") text += t;
  }
  return text;
}

/**
 * `<testsuites>` adds nothing to the suite path (vitest calls it "vitest tests"), a `<testsuite>`
 * adds its name, and a suite's `file` is its cases' file unless a case names its own.
 */
function walkJUnit(node: XmlNode, suite: string[], file: string | null, out: Collector): void {
  const tag = tagOf(node);
  if (tag === "testcase") {
    out.add(junitCase(node, suite, file));
    return;
  }
  if (tag !== "testsuites" && tag !== "testsuite") return;
  const name = tag === "testsuite" ? (attr(node, "name") ?? "").trim() : "";
  const path = name ? [...suite, name] : suite;
  const suiteFile = nonEmpty(attr(node, "file")) ?? file;
  for (const kid of childrenOf(node, tag)) walkJUnit(kid, path, suiteFile, out);
}

function junitCase(node: XmlNode, suite: string[], suiteFile: string | null): TestOutcome {
  const name = (attr(node, "name") ?? "").trim();
  const file = nonEmpty(attr(node, "file")) ?? suiteFile;
  let status: TestStatus = "passed";
  let message: string | null = null;
  for (const kid of childrenOf(node, "testcase")) {
    const tag = tagOf(kid);
    if (tag === "failure" || tag === "error") {
      if (status !== "failed") {
        message = cutMessage(nonEmpty(attr(kid, "message")) ?? nonEmpty(textOf(kid, tag)) ?? attr(kid, "type"));
      }
      status = "failed";
    } else if (tag === "skipped" && status === "passed") {
      status = "skipped";
    }
  }
  const seconds = Number.parseFloat(attr(node, "time") ?? "");
  const durationMs = Number.isFinite(seconds) && seconds >= 0 ? Math.round(seconds * 1_000_000) / 1_000 : null;
  return outcome(file, suite, name, status, durationMs, message);
}

// ---------------------------------------------------------------------------------------------
// TAP

/** One test point and, when it had subtests, theirs: Node reports a describe block this way. */
interface TapNode {
  result: TapResult;
  children: TapNode[];
}

/**
 * Reads TAP (versions 13 and 14, Node's `--test-reporter=tap` and node-tap's). Only leaf tests are
 * tests: a test point with subtests is their suite, as a describe block is. One exception keeps a
 * failure from vanishing: a suite that failed while no test under it did (Node reports a failing
 * `after` hook so) is kept as a failed test of its own.
 */
export function readTap(text: string): TestReport {
  checkSize(text);
  const top: TapNode[] = [];
  let sawVersion = false;
  let sawPlan = false;
  let sawPoint = false;
  let reading = true;
  const parser = new TapParser();
  // The parser makes up a version and a `1..0` plan at the end of text that had neither; only
  // what it saw while reading the text says whether this was TAP at all.
  parser.on("version", () => {
    if (reading) sawVersion = true;
  });
  parser.on("plan", () => {
    if (reading) sawPlan = true;
  });
  const watch = (p: TapParser, into: TapNode[]) => {
    // A subtest's block comes before the test point that closes it (or, buffered, inside it):
    // the next test point of this level owns the child seen last.
    let pending: TapNode[] | null = null;
    p.on("child", (child: TapParser) => {
      const kids: TapNode[] = [];
      pending = kids;
      watch(child, kids);
    });
    p.on("assert", (result: TapResult) => {
      sawPoint = true;
      into.push({ result, children: pending ?? [] });
      pending = null;
    });
  };
  watch(parser, top);
  parser.write(text.endsWith("\n") ? text : `${text}\n`);
  reading = false;
  parser.end();
  if (!sawVersion && !sawPlan && !sawPoint) {
    throw new ReportUnreadable("not TAP: no version line, no plan and no test points");
  }
  const out = new Collector("tap");
  walkTap(top, [], out);
  return out.report();
}

/** Adds the leaf tests under `nodes`; returns whether any of them failed. */
function walkTap(nodes: TapNode[], suite: string[], out: Collector): boolean {
  let anyFailed = false;
  for (const { result, children } of nodes) {
    const name = result.name.trim();
    const isSuite = children.length > 0 || result.diag?.type === "suite";
    if (!isSuite) {
      const o = tapOutcome(result, suite, name);
      out.add(o);
      if (o.status === "failed") anyFailed = true;
      continue;
    }
    const failedBelow = walkTap(children, [...suite, name], out);
    const o = tapOutcome(result, suite, name);
    if (o.status === "failed" && !failedBelow) {
      out.add(o);
      anyFailed = true;
    } else if (failedBelow) {
      anyFailed = true;
    }
  }
  return anyFailed;
}

function tapOutcome(result: TapResult, suite: string[], name: string): TestOutcome {
  const status: TestStatus = result.skip || result.todo ? "skipped" : result.ok ? "passed" : "failed";
  const diag = (result.diag ?? {}) as Record<string, unknown>;
  const ms = typeof diag.duration_ms === "number" ? diag.duration_ms : result.time;
  const durationMs = typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? ms : null;
  const message = status === "failed" ? cutMessage(diagText(diag.error) ?? diagText(diag.message)) : null;
  return outcome(null, suite, name, status, durationMs, message);
}

/** A diagnostic field as text: node writes `error:` as a string, node-tap may write an object. */
function diagText(v: unknown): string | null {
  if (typeof v === "string") return nonEmpty(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (v && typeof v === "object") {
    const m = (v as { message?: unknown }).message;
    if (typeof m === "string" && m.trim()) return m;
    return JSON.stringify(v);
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Shared

function checkSize(text: string): void {
  if (text.length > MAX_REPORT_CHARS) {
    throw new ReportUnreadable(
      `report too large: ${text.length} characters, more than the ${MAX_REPORT_CHARS} that are read`,
    );
  }
}

function nonEmpty(s: string | null | undefined): string | null {
  return s?.trim() ? s : null;
}

/** The message without surrounding blank space, cut to MAX_MESSAGE_CHARS with an ellipsis. */
function cutMessage(text: string | null): string | null {
  const t = text?.replace(/^\s*\n/, "").trimEnd();
  if (!t) return null;
  return t.length > MAX_MESSAGE_CHARS ? `${t.slice(0, MAX_MESSAGE_CHARS - 1)}…` : t;
}

function outcome(
  file: string | null,
  suite: string[],
  name: string,
  status: TestStatus,
  durationMs: number | null,
  message: string | null,
): TestOutcome {
  const id = [...(file ? [file] : []), ...suite, name].join(" > ");
  return { id, file, name, suite, status, durationMs, message: status === "failed" ? message : null };
}

/**
 * Counts every test and keeps at most MAX_KEPT_TESTS, failures before the rest, each group in
 * report order: a huge run's failures are what a reader needs, wherever they were in the report.
 */
class Collector {
  private readonly failed: TestOutcome[] = [];
  private readonly rest: TestOutcome[] = [];
  private readonly counts = { tests: 0, passed: 0, failed: 0, skipped: 0 };

  constructor(private readonly format: "junit" | "tap") {}

  add(o: TestOutcome): void {
    this.counts.tests++;
    this.counts[o.status]++;
    if (o.status === "failed") {
      if (this.failed.length < MAX_KEPT_TESTS) this.failed.push(o);
    } else if (this.failed.length + this.rest.length < MAX_KEPT_TESTS) {
      this.rest.push(o);
    }
  }

  report(): TestReport {
    const tests = [...this.failed, ...this.rest].slice(0, MAX_KEPT_TESTS);
    return { format: this.format, tests, counts: { ...this.counts } };
  }
}
