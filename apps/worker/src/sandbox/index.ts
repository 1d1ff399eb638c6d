import { DomainError, type Sandbox } from "@rhumbatron/core";
import { bubblewrapAvailable, bubblewrapSandbox } from "./bubblewrap.ts";
import { plainProcessSandbox } from "./process.ts";
import type { SandboxLimits, SandboxLog } from "./workspace.ts";

export {
  type BubblewrapOptions,
  type BubblewrapSandbox,
  bubblewrapAvailable,
  bubblewrapSandbox,
} from "./bubblewrap.ts";
export type { ProcessCap } from "./pids-cgroup.ts";
export { type PlainProcessOptions, type PlainProcessSandbox, plainProcessSandbox } from "./process.ts";
export { type SandboxLimits, type SandboxLog, sandboxLimits } from "./workspace.ts";

export type BubblewrapProbe = () => Promise<{ ok: true } | { ok: false; reason: string }>;

export interface CreateSandboxOptions {
  root: string;
  toolchainPaths?: readonly string[];
  allowlist?: readonly string[];
  limits: SandboxLimits;
  log: SandboxLog;
  bwrapPath?: string;
  /** Whether bubblewrap can run here; default: start one with `bwrapPath`. Tests pass their own. */
  probe?: BubblewrapProbe;
  /**
   * Refuse to run commands without isolation (RHUMBATRON_ENV=prod unless
   * RHUMBATRON_ALLOW_UNISOLATED is set): the Sandbox then refuses every workspace with the reason.
   */
  requireIsolation?: boolean;
}

/** What the worker reports about its Sandbox (heartbeat, health, start summary, operations page). */
export interface SandboxStatus {
  kind: Sandbox["kind"];
  isolates: boolean;
  /** Null when commands are isolated; otherwise what happens and how to fix it. */
  note: string | null;
}

export type ReportingSandbox = Sandbox & { readonly status: SandboxStatus };

const BWRAP_HINT = "install bubblewrap (apt-get install -y bubblewrap, or `npm run setup`)";

/**
 * bubblewrap when it starts a sandbox on this machine; otherwise the non-isolating fallback (which
 * warns), or, when isolation is required, a Sandbox that refuses every workspace with the reason.
 */
export async function createSandbox(options: CreateSandboxOptions): Promise<ReportingSandbox> {
  const probe = await (options.probe ?? (() => bubblewrapAvailable(options.bwrapPath)))();
  if (probe.ok) {
    return withStatus(await bubblewrapSandbox(options), { kind: "bubblewrap", isolates: true, note: null });
  }
  if (options.requireIsolation) {
    const note = `agent and check commands are refused: they would not be isolated (${probe.reason}); ${BWRAP_HINT}, or set RHUMBATRON_ALLOW_UNISOLATED=1 to run them anyway`;
    options.log.warn({ sandbox: "refused", reason: probe.reason }, note);
    return {
      kind: "process",
      isolates: false,
      billing: "measured",
      status: { kind: "process", isolates: false, note },
      open: async () => {
        throw new DomainError("UNAVAILABLE", note);
      },
    };
  }
  const note = `agent and check commands are NOT isolated: they run as plain processes (${probe.reason}); ${BWRAP_HINT}`;
  return withStatus(await plainProcessSandbox({ ...options, reason: probe.reason }), {
    kind: "process",
    isolates: false,
    note,
  });
}

function withStatus<S extends Sandbox>(sandbox: S, status: SandboxStatus): S & { readonly status: SandboxStatus } {
  return Object.assign(sandbox, { status });
}
