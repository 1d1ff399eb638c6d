import { candidateStatusIn, type SandboxCommand, type SandboxWorkspace } from "@rhumbatron/core";
import type { Db } from "@rhumbatron/db";
import { candidateStatusOf } from "@rhumbatron/db";
import { type CopyableWorkspace, canCopy } from "../sandbox/workspace.ts";

/**
 * The Candidate under verification was closed meanwhile (its Change was cancelled, or it went
 * stale): what its checks would show no longer matters, so none is recorded.
 */
export class CandidateClosed extends Error {
  constructor(
    readonly candidateId: string,
    readonly status: string,
  ) {
    super(`Candidate ${candidateId} is ${status}; its checks were stopped`);
  }
}

export interface ClosedWatch {
  /** The workspace (and its copies) whose commands are stopped once the Candidate closes. */
  workspace<W extends SandboxWorkspace>(ws: W): W;
  /** Throws CandidateClosed when the Candidate closed while its checks ran. */
  check(): void;
  stop(): void;
}

/**
 * Reads the Candidate's status every `everyMs` while its checks run; once it is closed, every
 * command running in the watched workspaces is stopped (its process group killed, as on a
 * timeout) and every later command refuses to start, with CandidateClosed. The check step
 * (workflow.ts, checkStep) throws CandidateClosed on instead of recording what a killed check
 * printed, so nothing is recorded for it: neither a failure nor an error. Without this a cancelled
 * Change's verification ran its checks to their timeouts, holding the Sandbox.
 */
export function watchCandidateClosed(db: Db, candidateId: string, everyMs: number): ClosedWatch {
  const controller = new AbortController();
  let closed: CandidateClosed | null = null;
  let reading = false;
  const timer = setInterval(() => {
    if (reading || closed) return;
    reading = true;
    candidateStatusOf(db, candidateId)
      .then((found) => {
        const status = found ?? "gone";
        if (!candidateStatusIn(status, "inProgress")) {
          closed = new CandidateClosed(candidateId, status);
          controller.abort(closed);
        }
      })
      // A failed read says nothing about the Candidate: the next tick reads again.
      .catch(() => {})
      .finally(() => {
        reading = false;
      });
  }, everyMs);
  timer.unref();
  const check = () => {
    if (closed) throw closed;
  };
  const wrap = <W extends SandboxWorkspace>(ws: W): W => {
    const run = async (cmd: SandboxCommand) => {
      check();
      const signal = cmd.signal ? AbortSignal.any([cmd.signal, controller.signal]) : controller.signal;
      const result = await ws.run({ ...cmd, signal });
      check();
      return result;
    };
    const wrapped: SandboxWorkspace = { path: ws.path, run, remove: () => ws.remove() };
    if (canCopy(ws)) {
      const copyable: CopyableWorkspace = { ...wrapped, copy: async (label) => wrap(await ws.copy(label)) };
      return copyable as unknown as W;
    }
    return wrapped as unknown as W;
  };
  return { workspace: wrap, check, stop: () => clearInterval(timer) };
}
