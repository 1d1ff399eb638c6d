/**
 * `npm run test:loaded`: the whole suite (`npm test`, with any arguments passed on, e.g.
 * `--only=unit`) while two busy loops keep both cores of these machines saturated. No test may pass
 * or fail by how fast the machine is, so this run must pass as the unloaded one does. The loops are
 * this script's own children: they are stopped by their PIDs when the suite ends, or on Ctrl-C.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cpus } from "node:os";
import { ROOT } from "./lib/stack.ts";

const LOOPS = Number(process.env.RHUMBATRON_LOAD_LOOPS ?? 2);

function busyLoop(): ChildProcess {
  // A tight loop that never yields; stdio ignored, so it prints nothing.
  return spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" });
}

const loops = Array.from({ length: LOOPS }, busyLoop);
const stopLoops = () => {
  for (const l of loops) if (l.exitCode === null && l.pid) process.kill(l.pid, "SIGKILL");
};
process.on("exit", stopLoops);
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    stopLoops();
    process.exit(130);
  });
}

console.log(
  `test:loaded: ${LOOPS} busy loops (pids ${loops.map((l) => l.pid).join(", ")}) on ${cpus().length} cores; running npm test ${process.argv.slice(2).join(" ")}`,
);
const started = Date.now();
const suite = spawn(process.execPath, ["--import", "tsx", "scripts/test.ts", ...process.argv.slice(2)], {
  cwd: ROOT,
  stdio: "inherit",
});
suite.on("exit", (code, signal) => {
  stopLoops();
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(
    JSON.stringify({ bench: "test:loaded", loops: LOOPS, cores: cpus().length, seconds, exitCode: code, signal }),
  );
  process.exit(code ?? 1);
});
