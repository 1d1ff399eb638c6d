import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CommandResult } from "@rhumbatron/core";
import { expect } from "vitest";

/**
 * Test support only: the host's view of what a Sandbox command started, for the kill tests of both
 * Sandboxes (bubblewrap.test.ts, process.test.ts). A command started with `startsSleep` says when its
 * child runs; the tests find its processes on the host and wait until every one of them is gone.
 */
/** A process as the host sees it: the start time tells it apart from a later process given the same pid. */
export interface HostProcess {
  pid: number;
  /** Its pid inside its own pid namespace, what the command itself reports (the same pid outside bubblewrap). */
  innerPid: number;
  startTime: string;
  state: string;
  args: string;
}

export function hostProcess(pid: number): HostProcess | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const nsPids = /^NSpid:\s*(.*)$/m
      .exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
      ?.trim()
      .split(/\s+/);
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    return { pid, innerPid: Number(nsPids?.at(-1)), startTime: fields[19] ?? "", state: fields[0] ?? "", args };
  } catch {
    return null; // gone while being read
  }
}

/** Every host process with `marker` as a word of its command line; bwrap's own carry it too, in the script. */
export function hostProcessesWith(marker: string): HostProcess[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => hostProcess(Number(name)))
    .filter((p): p is HostProcess => p?.args.split(/[\s"'[\](),;]+/).includes(marker) === true);
}

/** Polls `probe` until `ok` holds; the error shows the last value. */
export async function waitUntil<V>(what: string, probe: () => V, ok: (v: V) => boolean, ms = 30_000): Promise<V> {
  const end = Date.now() + ms;
  let v = probe();
  while (!ok(v)) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
    v = probe();
  }
  return v;
}

/**
 * A script that starts `sleep <marker>` and, once it runs, writes its own and the child's pid to
 * `started-<marker>` in the workspace: the test kills nothing before it knows what is there to kill.
 */
export const startsSleep = (marker: string) =>
  `const c = require("child_process").spawn("sleep", ["${marker}"]);
   c.on("spawn", () => require("fs").writeFileSync("started-${marker}", JSON.stringify([process.pid, c.pid])));
   setInterval(() => {}, 1000);`;

/**
 * The host processes of a command from `startsSleep`, read once the command says its child runs:
 * the pids it reports are its namespace's, so the host finds them by the marker and checks they match.
 */
export async function startedProcesses(
  workspace: string,
  marker: string,
  running: Promise<CommandResult>,
): Promise<HostProcess[]> {
  let ended: CommandResult | undefined;
  running.then(
    (r) => {
      ended = r;
    },
    () => {}, // the caller awaits the run and sees its failure
  );
  const reported = await waitUntil(
    `the command to start sleep ${marker}`,
    () => {
      if (ended) throw new Error(`the command ended before its child started: ${JSON.stringify(ended)}`);
      try {
        return JSON.parse(readFileSync(join(workspace, `started-${marker}`), "utf8")) as number[];
      } catch {
        return null; // not written yet, or half written
      }
    },
    (pids) => pids !== null,
  );
  const found = hostProcessesWith(marker);
  expect(found.map((p) => p.innerPid)).toEqual(expect.arrayContaining(reported ?? []));
  expect(found.map((p) => p.args)).toContain(`sleep ${marker}`);
  return found;
}

/** Waits for every one of `procs` to be gone (a zombie has died already); kills and names any survivor. */
export async function expectAllGone(procs: HostProcess[]) {
  const running = () =>
    procs.filter((p) => {
      const now = hostProcess(p.pid);
      return now !== null && now.startTime === p.startTime && now.state !== "Z";
    });
  try {
    await waitUntil("everything the command started to be gone", running, (left) => left.length === 0, 10_000);
  } finally {
    for (const p of running()) process.kill(p.pid, "SIGKILL");
  }
}
