import type { Sandbox } from "@rhumbatron/core";
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

export interface CreateSandboxOptions {
  root: string;
  toolchainPaths?: readonly string[];
  allowlist?: readonly string[];
  limits: SandboxLimits;
  log: SandboxLog;
  bwrapPath?: string;
}

/** bubblewrap when it starts a sandbox on this machine, else the non-isolating fallback (which warns). */
export async function createSandbox(options: CreateSandboxOptions): Promise<Sandbox> {
  const probe = await bubblewrapAvailable(options.bwrapPath);
  if (probe.ok) return bubblewrapSandbox(options);
  return plainProcessSandbox({ ...options, reason: probe.reason });
}
