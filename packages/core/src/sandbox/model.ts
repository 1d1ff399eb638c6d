/**
 * The Sandbox port (docs/protocol.md, The Sandbox). One Sandbox per Project (`proj-<uuid>`); each agent
 * run and each Candidate check gets its own run directory in it. Adapters live in
 * apps/worker/src/sandbox (bubblewrap, or a plain-process fallback that isolates nothing).
 */

/** Which meter rules apply: agent workspaces reserve 300 s, Candidate checks 900 s. */
export type SandboxKind = "agent" | "candidate";

/**
 * How a Sandbox provider is charged on the monthly meter (docs/sandbox.md, the meter).
 * `measured`: the seconds its workspace ran, nothing more (local bubblewrap or plain processes stop
 * when the run ends). `container`: those seconds plus the idle tail a cloud container stays awake
 * before it sleeps (`config.sandbox.agentIdleTailSeconds`, `candidateIdleTailSeconds`).
 */
export type SandboxBilling = "measured" | "container";

export interface RunDir {
  projectId: string;
  /** From `dirForAgentRun` or `dirForCandidate`. */
  dirName: string;
}

export interface SandboxCommand {
  /** argv[0] is a bare executable name on the allowlist (or in `allow`); nothing runs through a shell. */
  argv: string[];
  /**
   * Programs this command may start besides the Sandbox's allowlist: the tools a project's checks
   * file requires (checks-file.ts, `requires`), for that project's setup and checks only.
   */
  allow?: readonly string[];
  /** Relative to the workspace and inside it. */
  cwd?: string;
  /** The only variables besides PATH, HOME and LANG (for example the repository token). */
  env?: Record<string, string>;
  timeoutMs: number;
  stdin?: string;
  /**
   * Stops the command early (for example a server the caller is done with): its process group is
   * killed as on a timeout, but the result says `timedOut: false` and `signal: "SIGKILL"`.
   */
  signal?: AbortSignal;
  /**
   * Sees the command's stdout as it comes, chunk by chunk (the result still holds it, capped): a
   * program Agent's runner reads the tokens the program reports while it runs.
   */
  onStdout?: (chunk: string) => void;
  /**
   * Only a project's setup step (installing its dependencies) has this: the command then reaches
   * the host's filtering proxy through `proxySocket` (a Unix socket the worker listens on, letting
   * through only the project's package registries), with the proxy variables set, and nothing else.
   * Every other command has no network at all.
   */
  network?: { proxySocket: string };
}

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** stdout or stderr passed the output cap and was cut. */
  truncated: boolean;
  durationMs: number;
}

export interface SandboxWorkspace {
  /** The workspace directory on the host. */
  path: string;
  /** Refused commands throw DomainError FORBIDDEN; a vanished workspace throws UNAVAILABLE (Sandbox loss). */
  run(cmd: SandboxCommand): Promise<CommandResult>;
  remove(): Promise<void>;
}

export interface Sandbox {
  readonly kind: "bubblewrap" | "process";
  /** False for the fallback: commands then see the host's file system and network. */
  readonly isolates: boolean;
  /** What a closed workspace costs on the meter; pass it to settleSandbox. */
  readonly billing: SandboxBilling;
  open(runDir: RunDir): Promise<SandboxWorkspace>;
}
