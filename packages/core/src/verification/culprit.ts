/**
 * The culprit Task (docs/flaky-tests.md): when a Candidate of several ChangeSets fails a check,
 * prefixes of its ChangeSets in Work Graph order are composed on the same base and the check run
 * on each, by binary search: the base (prefix 0) passed, the whole (prefix N) failed, so at most
 * ceil(log2 N) prefixes are tried to find the first ChangeSet with which it fails.
 */
export interface CulpritProbe {
  /** How many ChangeSets, from the first, the probe composed. */
  prefix: number;
  evidenceId: string;
  failed: boolean;
}

export interface Culprit {
  checkId: string;
  /** The failing tests the probes looked for (empty: the check's own pass or fail). */
  tests: string[];
  /** Null when the base itself fails the check: no Task of the Change broke it. */
  task: { id: string; key: string; title: string; changeSetId: string; position: number } | null;
  of: number;
  probes: CulpritProbe[];
}

/** The next prefix to try while the first failing one is unknown (`lo` passed, `hi` failed), else null. */
export function nextPrefix(lo: number, hi: number): number | null {
  return hi - lo > 1 ? Math.floor((lo + hi) / 2) : null;
}

/** As the gap, the Change page and `change show` say it. */
export function culpritText(c: Culprit): string {
  const runs = `${c.probes.length} extra run${c.probes.length === 1 ? "" : "s"} of ${c.checkId}`;
  if (!c.task) return `culprit: none of the Change's Tasks: the base already fails ${c.checkId} (${runs})`;
  const tests = c.tests.length ? ` (${c.tests.slice(0, 3).join("; ")}${c.tests.length > 3 ? "; …" : ""})` : "";
  return `culprit: Task ${c.task.key} "${c.task.title}", ChangeSet ${c.task.position} of ${c.of}, first fails ${c.checkId}${tests}; found in ${runs}`;
}

/** Whether a check's `only` command names its tests once: `{tests}` as an argument of its own, or `{pattern}` inside one. */
export function namesTestsOnce(argv: readonly string[]): boolean {
  const tests = argv.filter((a) => a.includes("{tests}"));
  const patterns = argv.join("\u0000").split("{pattern}").length - 1;
  return tests.length + patterns === 1 && tests.every((a) => a === "{tests}");
}

/**
 * The `only` command that runs just these tests: `{tests}` becomes each test's name, one argument
 * each; `{pattern}` one regular expression matching any of them. A nested name ("suite > test") is
 * matched by its last part, so runners that join the parts otherwise (vitest's -t, node's
 * --test-name-pattern) still find it; a few more tests may run, never fewer.
 */
export function onlyTests(only: readonly string[], names: readonly string[]): string[] {
  const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  // A group, so text around `{pattern}` (an anchor, a prefix) applies to every name.
  const pattern = `(?:${[...new Set(names.map((n) => literal(n.split(" > ").at(-1) ?? n)))].join("|")})`;
  return only.flatMap((a) => (a === "{tests}" ? [...names] : [a.replaceAll("{pattern}", pattern)]));
}
