import type { Command } from "commander";
import type { TestFilter } from "../client/tests.ts";
import type { TestQuarantineResult, TestRow } from "../client/types.ts";
import { RhumbatronError } from "../errors.ts";
import type { Cli } from "./shared.ts";

/** `rhumbatron tests …`: a project's flaky, broken and quarantined tests (docs/flaky-tests.md). */
export function addTestsCommands(program: Command, cli: Cli): void {
  const { setup } = cli;
  const tests = program
    .command("tests")
    .description("a project's flaky, broken and quarantined tests, from every check's test reports")
    .requiredOption("--project <id>", "the project")
    .option("--all", "every test the project's checks reported")
    .option("--flaky", "only the flaky ones")
    .option("--broken", "only the broken ones")
    .option("--quarantined", "only the ones in quarantine")
    .action(async (opts: { project: string } & Partial<Record<TestFilter, boolean>>, cmd: Command) => {
      const { client, print } = setup(cmd);
      const filter = (["all", "flaky", "broken", "quarantined"] as const).find((f) => opts[f]) ?? "troubled";
      const rows = await client.tests(opts.project, filter);
      print(rows, () => formatTests(rows, filter));
    });
  tests
    .command("quarantine")
    .description("quarantine a test (admin): it keeps running, its failures stop blocking, and each gate names it")
    .argument("<checkId>", "the check whose report has the test")
    .argument("<testId>", "the test's ID as `rhumbatron tests` prints it")
    .requiredOption("--reason <text>", "why: the gate and the test's page show it")
    .option("--until <time>", "when the quarantine ends (ISO time); by default the deployment's tests.quarantineDays")
    .action(async (checkId: string, testId: string, opts: { reason: string; until?: string }, cmd: Command) => {
      const { client, print } = setup(cmd);
      const project = projectOf(cmd);
      const until = opts.until ? isoTime(opts.until) : undefined;
      const r = await client.quarantineTest(project, checkId, testId, opts.reason, until);
      print(r, () => quarantineLine(r));
    });
  tests
    .command("release")
    .description("take a test out of quarantine (admin): its failures block again")
    .argument("<checkId>")
    .argument("<testId>")
    .action(async (checkId: string, testId: string, _opts: unknown, cmd: Command) => {
      const { client, print } = setup(cmd);
      const project = projectOf(cmd);
      const r = await client.releaseTest(project, checkId, testId);
      print(r, () => quarantineLine(r));
    });
}

/** `--project` is the `tests` command's own option. */
const projectOf = (cmd: Command) => (cmd.parent as Command).opts<{ project: string }>().project;

function isoTime(text: string): string {
  const t = new Date(text);
  if (Number.isNaN(t.getTime()))
    throw new RhumbatronError(
      "BAD_REQUEST",
      `--until ${text} is not a time: give one as 2027-01-31 or 2027-01-31T12:00:00Z`,
    );
  return t.toISOString();
}

function quarantineLine(r: TestQuarantineResult): string {
  const q = r.row.quarantine;
  const what = q
    ? `in quarantine until ${new Date(q.expiresAt).toISOString()} (owner ${q.ownerName ?? q.owner}: ${q.reason})`
    : "not in quarantine: its failures block";
  return `${r.row.checkId} › ${r.row.testId}: ${what}${r.changed ? "" : " (unchanged)"}`;
}

/** One line per test: status, rate, since, quarantine, the Candidates it held up. */
export function formatTests(rows: readonly TestRow[], filter: TestFilter): string {
  if (rows.length === 0) {
    return filter === "troubled"
      ? "no flaky, broken or quarantined test"
      : `no ${filter === "all" ? "" : `${filter} `}test`;
  }
  return rows
    .map((r) => {
      const since = new Date(r.since).toISOString().slice(0, 10);
      const q = r.quarantine
        ? `; quarantined until ${new Date(r.quarantine.expiresAt).toISOString().slice(0, 10)} by ${r.quarantine.ownerName ?? r.quarantine.owner}: ${r.quarantine.reason}`
        : "";
      const held = r.delayedCount ? `; held up ${r.delayedCount} Candidate${r.delayedCount === 1 ? "" : "s"}` : "";
      return `${r.status.padEnd(6)} ${r.checkId} › ${r.testId}\n       ${r.rate}, ${r.failedRuns} failed, since ${since}${held}${q}`;
    })
    .join("\n");
}
