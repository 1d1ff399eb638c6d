import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { type CommandResult, DomainError, outputCutLine } from "@rhumbatron/core";

/**
 * Spawns one process in its own process group with a hard timeout and an output cap. Both
 * adapters use it; the bubblewrap one passes `bwrap …` as the program.
 */
export interface CappedRun {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stdin?: string;
  timeoutMs: number;
  maxOutputBytes: number;
  /** Extra clean-up on timeout or abort (for example killing every task of a pids cgroup). */
  onTimeout?: () => Promise<void> | void;
  /** Aborting kills the process group like a timeout, but the result keeps `timedOut: false`. */
  signal?: AbortSignal;
  /** Sees stdout as it comes (SandboxCommand.onStdout). */
  onStdout?: (chunk: string) => void;
}

/** After the process exits, how long leftover holders of its pipes may keep them open. */
const DRAIN_AFTER_EXIT_MS = 2_000;

/**
 * Keeps the first and the last half of `max` bytes, with a line saying how much was cut between
 * them: a test runner prints its summary last, so the end must survive a cut as well as the start.
 */
function capture(stream: Readable, max: number) {
  const headMax = Math.ceil(max / 2);
  const tailMax = max - headMax;
  const head: Buffer[] = [];
  let headLen = 0;
  let tail: Buffer[] = [];
  let tailLen = 0;
  let seen = 0;
  // Keep draining past the cap so the process never blocks on a full pipe.
  stream.on("data", (b: Buffer) => {
    seen += b.length;
    let rest = b;
    if (headLen < headMax) {
      const take = rest.subarray(0, headMax - headLen);
      head.push(take);
      headLen += take.length;
      rest = rest.subarray(take.length);
    }
    if (rest.length === 0 || tailMax === 0) return;
    tail.push(rest);
    tailLen += rest.length;
    if (tailLen > tailMax * 2) {
      const joined = Buffer.concat(tail);
      tail = [joined.subarray(joined.length - tailMax)];
      tailLen = tailMax;
    }
  });
  return {
    text: () => {
      const t = Buffer.concat(tail);
      const kept = t.subarray(Math.max(0, t.length - tailMax));
      const cut = seen - headLen - kept.length;
      const middle = cut > 0 ? `\n${outputCutLine(cut, max)}\n` : "";
      return `${Buffer.concat(head).toString("utf8")}${middle}${kept.toString("utf8")}`;
    },
    truncated: () => seen > max,
  };
}

export function runCapped(o: CappedRun): Promise<CommandResult> {
  const started = performance.now();
  const child = spawn(o.file, o.args, { cwd: o.cwd, env: o.env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  const out = capture(child.stdout, o.maxOutputBytes);
  const err = capture(child.stderr, o.maxOutputBytes);
  if (o.onStdout) {
    const decoder = new TextDecoder();
    const see = o.onStdout;
    child.stdout.on("data", (b: Buffer) => see(decoder.decode(b, { stream: true })));
  }
  const killGroup = () => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // the group is already gone
    }
  };
  let timedOut = false;
  let exited = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
    void o.onTimeout?.();
  }, o.timeoutMs);
  const onAbort = () => {
    if (exited) return;
    killGroup();
    void o.onTimeout?.();
  };
  if (o.signal?.aborted) onAbort();
  else o.signal?.addEventListener("abort", onAbort, { once: true });
  const settle = () => {
    clearTimeout(timer);
    o.signal?.removeEventListener("abort", onAbort);
  };
  child.stdin.on("error", () => {}); // a command that never reads stdin closes it early: not a failure
  child.stdin.end(o.stdin ?? "");

  return new Promise((resolve, reject) => {
    child.on("error", (e) => {
      settle();
      reject(new DomainError("UNAVAILABLE", `could not start ${o.file}: ${e.message}`));
    });
    child.on("exit", () => {
      exited = true;
      // Background children of the command die with it; one that escaped the group cannot hold the pipes forever.
      killGroup();
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, DRAIN_AFTER_EXIT_MS).unref();
    });
    child.on("close", (code, signal) => {
      settle();
      resolve({
        exitCode: code,
        signal,
        stdout: out.text(),
        stderr: err.text(),
        timedOut,
        truncated: out.truncated() || err.truncated(),
        durationMs: Math.round(performance.now() - started),
      });
    });
  });
}
