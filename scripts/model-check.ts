/**
 * `npm run model-check -- --runs 2000 --seed 7`: the promotion protocol's model check
 * (docs/model-check.md) for as many runs as asked, on DATABASE_URL's Postgres or an embedded one
 * started the way the tests start theirs. Prints one JSON line: runs, commands executed, failures,
 * seed, duration (and with `--outcomes`, how often each command answered what); each failure's
 * report (its seed, path and shrunk command sequence) goes to stderr, and the exit code is 1.
 *
 * --runs N (default 1000), --seed S (default: the time), --lanes L (runs side by side, default 4),
 * --max-commands C (default 10), --path P --replay-path R (replays the failure fast-check reported
 * with `seed` S, `path` P and the counterexample's replayPath R, on one lane), --no-late-compose (never compose a cancelled Change), --outcomes (how
 * often each command answered what, and where the time went).
 */
import { modelCheckDatabase, runModelCheck } from "../apps/worker/src/model/promotion-check.testing.ts";

const args = process.argv.slice(2);
const value = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const n = Number(args[i + 1]);
  if (!Number.isSafeInteger(n) || n < 0) {
    console.error(`${name} takes a whole number, not ${args[i + 1] ?? "nothing"}`);
    process.exit(2);
  }
  return n;
};

const text = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const path = text("--path");
const replayPath = text("--replay-path");
const database = await modelCheckDatabase();
try {
  const result = await runModelCheck({
    db: database.db,
    runs: value("--runs", 1000),
    seed: value("--seed", Date.now() % 2 ** 31),
    lanes: value("--lanes", 4),
    maxCommands: value("--max-commands", 10),
    lateCompose: !args.includes("--no-late-compose"),
    ...(path ? { path } : {}),
    ...(replayPath ? { replayPath } : {}),
  });
  const { reports, outcomes, ms, ...line } = result;
  console.log(JSON.stringify(args.includes("--outcomes") ? { ...line, outcomes, ms } : line));
  for (const report of reports) console.error(report);
  process.exitCode = result.failures > 0 ? 1 : 0;
} finally {
  await database.close();
}
