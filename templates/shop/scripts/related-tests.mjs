// The shop's related tests (its checks file, `targeted`): the compiled tests whose file name starts
// with a changed file's name (src/cart.ts -> dist/test/cart.test.js, dist/test/cart.invariant.test.js),
// or every test when no changed file maps to one, so a gap in the mapping never runs less. Run after
// `npm run build`; writes a JUnit report to dist/targeted.junit.xml and prints the spec reporter.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";

const changed = process.argv.slice(2);
const tests = readdirSync("dist/test")
  .filter((f) => f.endsWith(".test.js"))
  .sort();
const stems = changed.map((p) => (p.split("/").at(-1) ?? "").replace(/\.(test\.)?[tj]sx?$/, "")).filter(Boolean);
const related = tests.filter((t) => stems.some((s) => t.startsWith(`${s}.`)));
const picked = related.length > 0 ? related : tests;
console.log(
  related.length > 0
    ? `related tests of ${changed.join(", ")}: ${picked.join(", ")}`
    : `no test maps to ${changed.length ? changed.join(", ") : "the change"}: every test runs`,
);
const r = spawnSync(
  process.execPath,
  [
    "--test",
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    "--test-reporter=junit",
    "--test-reporter-destination=dist/targeted.junit.xml",
    ...picked.map((t) => `dist/test/${t}`),
  ],
  { stdio: "inherit" },
);
process.exit(r.status ?? 1);
