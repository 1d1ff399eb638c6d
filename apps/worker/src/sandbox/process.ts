import { join } from "node:path";
import { DEFAULT_COMMAND_ALLOWLIST, type Sandbox, type SandboxCommand } from "@rhumbatron/core";
import { assertProxySocket, openLoopbackForwarder, proxyEnv } from "./network.ts";
import { detectProcessCap, type ProcessCap, runUnderCap } from "./pids-cgroup.ts";
import {
  checkCommand,
  openWorkspace,
  type SandboxLimits,
  type SandboxLog,
  SYSTEM_PATH,
  toolchainBins,
} from "./workspace.ts";

/**
 * Fallback when bubblewrap cannot run (no bwrap, or user namespaces disabled). It applies the same
 * allowlist, scrubbed environment, timeout, output cap and process cap, but commands see the host's
 * file system and network: it does NOT isolate, and says so when created. A command with `network`
 * gets the proxy variables pointing at a host listener that leads to the registry proxy, so a
 * package manager still goes through the allow list; anything ignoring those variables is not stopped.
 */
export interface PlainProcessOptions {
  root: string;
  toolchainPaths?: readonly string[];
  allowlist?: readonly string[];
  limits: SandboxLimits;
  log: SandboxLog;
  /** Why bubblewrap is not used, for the warning. */
  reason?: string;
}

export type PlainProcessSandbox = Sandbox & {
  readonly kind: "process";
  readonly processCap: ProcessCap;
  /** The warning logged at creation. */
  readonly warning: string;
};

export async function plainProcessSandbox(options: PlainProcessOptions): Promise<PlainProcessSandbox> {
  const allowlist = options.allowlist ?? DEFAULT_COMMAND_ALLOWLIST;
  const bins = await toolchainBins(options.toolchainPaths ?? []);
  const PATH = [...bins, ...SYSTEM_PATH].join(":");
  const cap = await detectProcessCap();
  const warning =
    "SANDBOX DOES NOT ISOLATE: agent and check commands run as plain processes with the worker's " +
    "file system and network access (only the environment is scrubbed; a setup step's registry allow list holds only " +
    "for tools that use the proxy variables). Install bubblewrap: apt-get install -y bubblewrap";
  options.log.warn({ sandbox: "process", reason: options.reason ?? null, processCap: cap.cap }, warning);

  async function run(path: string, cmd: SandboxCommand) {
    const rel = await checkCommand(path, cmd, allowlist);
    let proxy: Awaited<ReturnType<typeof openLoopbackForwarder>> | undefined;
    if (cmd.network) {
      await assertProxySocket(cmd.network.proxySocket);
      proxy = await openLoopbackForwarder(cmd.network.proxySocket);
    }
    try {
      return await runUnderCap(cap, options.limits, cmd.argv, {
        cwd: rel ? join(path, rel) : path,
        env: { PATH, HOME: path, LANG: "C.UTF-8", ...cmd.env, ...(proxy ? proxyEnv(proxy.url) : {}) },
        cmd,
      });
    } finally {
      await proxy?.close();
    }
  }

  return {
    kind: "process",
    isolates: false,
    // A local process: charged the seconds its workspace ran, no idle tail (docs/sandbox.md).
    billing: "measured",
    processCap: cap.cap,
    warning,
    open: (runDir) => openWorkspace(options.root, runDir, run),
  };
}
