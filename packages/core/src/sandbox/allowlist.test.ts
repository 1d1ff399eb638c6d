import { describe, expect, it } from "vitest";
import { commandRefusal, DEFAULT_COMMAND_ALLOWLIST, isAllowedCommand } from "./allowlist.ts";

describe("command allowlist", () => {
  const list = ["node", "npm", "tsc", "git", "ls", "cat"];

  it("admits bare names on the list", () => {
    expect(isAllowedCommand(["node", "-e", "1"], list)).toBe(true);
    expect(isAllowedCommand(["git", "status"], DEFAULT_COMMAND_ALLOWLIST)).toBe(true);
  });

  it("refuses shells, network clients, paths and empty commands with a reason", () => {
    expect(commandRefusal(["bash", "-c", "id"], list)).toMatch(/"bash" is not on the sandbox allowlist/);
    expect(commandRefusal(["curl", "http://x"], list)).toMatch(/"curl" is not on the sandbox allowlist/);
    expect(commandRefusal(["/bin/sh", "-c", "id"], list)).toMatch(/bare executable name/);
    expect(commandRefusal(["./node"], list)).toMatch(/bare executable name/);
    expect(commandRefusal(["/usr/bin/node"], list)).toMatch(/bare executable name/);
    expect(commandRefusal(["node;id"], list)).toMatch(/bare executable name/);
    expect(commandRefusal([], list)).toMatch(/empty command/);
    for (const name of ["bash", "sh", "curl", "wget", "env"]) expect(DEFAULT_COMMAND_ALLOWLIST).not.toContain(name);
  });
});
