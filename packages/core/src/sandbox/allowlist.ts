/**
 * The command allowlist for `run_command` (docs/protocol.md, The Sandbox). It is policy, not isolation: node,
 * npm and git can start other programs, so the Sandbox itself is what contains them. It keeps
 * agents to the tools a TypeScript repository needs and refuses shells and network clients by name.
 */
export const DEFAULT_COMMAND_ALLOWLIST: readonly string[] = Object.freeze([
  "node",
  "npm",
  "npx",
  "tsc",
  "git",
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "grep",
  "diff",
  "mkdir",
  "cp",
  "mv",
  "rm",
]);

const BARE_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;

/** Why argv may not run, or null when it may. The message is shown to the agent as is. */
export function commandRefusal(argv: readonly string[], allowlist: readonly string[]): string | null {
  const name = argv[0];
  if (name === undefined || name === "") return "empty command: argv[0] must name an executable";
  if (!BARE_NAME.test(name)) {
    return `command ${JSON.stringify(name)} refused: give a bare executable name (no path, no shell syntax) from the allowlist: ${allowlist.join(", ")}`;
  }
  if (!allowlist.includes(name)) {
    return `command ${JSON.stringify(name)} is not on the sandbox allowlist: ${allowlist.join(", ")}`;
  }
  return null;
}

export function isAllowedCommand(argv: readonly string[], allowlist: readonly string[]): boolean {
  return commandRefusal(argv, allowlist) === null;
}
