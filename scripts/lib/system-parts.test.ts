import { describe, expect, it } from "vitest";
import { ensureSystemParts, SetupError, type SetupHost } from "./system-parts.ts";

/**
 * A machine as the setup step sees it: which programs are on it, who we are, whether sudo works
 * without a password, and an apt-get that puts the packages it is asked for on the machine.
 */
function fakeMachine(o: {
  programs: string[];
  uid?: number;
  sudo?: "none" | "passwordless" | "asks";
  env?: NodeJS.ProcessEnv;
  aptFails?: boolean;
}) {
  const files = new Set(o.programs.map((p) => (p.startsWith("/") ? p : `/usr/bin/${p}`)));
  if (o.sudo && o.sudo !== "none") files.add("/usr/bin/sudo");
  const ran: string[][] = [];
  const lines: string[] = [];
  const provides: Record<string, string> = {
    chromium: "/usr/bin/chromium",
    bubblewrap: "/usr/bin/bwrap",
    git: "/usr/bin/git",
  };
  const host: SetupHost = {
    env: o.env ?? {},
    uid: o.uid ?? 0,
    exists: (p) => files.has(p),
    which: (c) => (files.has(`/usr/bin/${c}`) ? `/usr/bin/${c}` : null),
    run: async (argv) => {
      ran.push(argv);
      const args = argv[0] === "sudo" ? argv.slice(argv[1] === "-n" ? 2 : 1) : argv;
      if (argv[0] === "sudo" && args[0] === "true") return { code: o.sudo === "passwordless" ? 0 : 1, output: "" };
      if (argv[0] !== "sudo" && o.uid !== undefined && o.uid !== 0) return { code: 100, output: "Permission denied" };
      if (args[0] !== "apt-get") return { code: 127, output: "not found" };
      if (o.aptFails) return { code: 100, output: "E: Unable to locate package chromium" };
      if (args[1] === "install")
        for (const pkg of args.slice(2).filter((a) => !a.startsWith("-"))) files.add(provides[pkg] ?? "");
      return { code: 0, output: "" };
    },
    log: (l) => lines.push(l),
  };
  return { host, ran, lines };
}

const ALL = ["apt-get", "git", "chromium", "bwrap"];

describe("the setup step", () => {
  it("present: installs nothing and runs nothing", async () => {
    const m = fakeMachine({ programs: ALL });
    const r = await ensureSystemParts(m.host);
    expect(r).toEqual({ present: ["git", "chromium", "bubblewrap"], installed: [], missing: [] });
    expect(m.ran).toEqual([]);
    expect(m.lines).toEqual([]);
  });

  it("missing and installable as root: installs them with apt-get, one line each saying why", async () => {
    const m = fakeMachine({ programs: ["apt-get", "git"] });
    const r = await ensureSystemParts(m.host);
    expect(r).toEqual({ present: ["git"], installed: ["chromium", "bubblewrap"], missing: [] });
    expect(m.ran).toEqual([
      ["apt-get", "update", "-qq"],
      ["apt-get", "install", "-y", "-qq", "chromium", "bubblewrap"],
    ]);
    expect(m.lines).toHaveLength(2);
    expect(m.lines[0]).toMatch(/^setup: installing chromium \(Debian package chromium\): .*browser check/);
    expect(m.lines[1]).toMatch(/^setup: installing bubblewrap \(Debian package bubblewrap\): .*isolates/);
  });

  it("missing and installable with passwordless sudo: installs through sudo -n", async () => {
    const m = fakeMachine({ programs: ["apt-get", "git", "chromium"], uid: 1000, sudo: "passwordless" });
    const r = await ensureSystemParts(m.host);
    expect(r.installed).toEqual(["bubblewrap"]);
    expect(m.ran.slice(1)).toEqual([
      ["sudo", "-n", "apt-get", "update", "-qq"],
      ["sudo", "-n", "apt-get", "install", "-y", "-qq", "bubblewrap"],
    ]);
  });

  it("missing and not installable (no root, sudo asks for a password): stops with the exact command and what breaks", async () => {
    const m = fakeMachine({ programs: ["apt-get", "git"], uid: 1000, sudo: "asks" });
    const err = await ensureSystemParts(m.host).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SetupError);
    const message = (err as Error).message;
    expect(message).toContain("run `sudo apt-get install -y chromium bubblewrap`");
    expect(message).toContain("browser checks end in error");
    expect(message).toContain("NOT isolated");
    expect(m.ran).toEqual([["sudo", "-n", "true"]]);
  });

  it("missing and not installable (no apt-get): says to use the machine's package manager", async () => {
    const m = fakeMachine({ programs: ["git", "chromium"] });
    await expect(ensureSystemParts(m.host)).rejects.toThrow(/no apt-get: install bubblewrap with your package manager/);
    expect(m.ran).toEqual([]);
  });

  it("an apt-get that fails stops with its last lines", async () => {
    const m = fakeMachine({ programs: ["apt-get", "git", "bwrap"], aptFails: true });
    await expect(ensureSystemParts(m.host)).rejects.toThrow(
      /`apt-get update -qq` failed \(exit 100: E: Unable to locate package chromium\)/,
    );
  });

  it("respects CHROMIUM_PATH: a given Chromium counts as present, a wrong path stops with what to fix", async () => {
    const own = fakeMachine({
      programs: ["apt-get", "git", "bwrap", "/opt/chrome/chrome"],
      env: { CHROMIUM_PATH: "/opt/chrome/chrome" },
    });
    expect((await ensureSystemParts(own.host)).present).toContain("chromium");
    expect(own.ran).toEqual([]);
    const wrong = fakeMachine({ programs: ALL, env: { CHROMIUM_PATH: "/opt/nowhere/chrome" } });
    await expect(ensureSystemParts(wrong.host)).rejects.toThrow(
      /CHROMIUM_PATH is \/opt\/nowhere\/chrome, which does not exist/,
    );
  });

  it("RHUMBATRON_SYSTEM_SETUP=off only reports what is missing, and installs nothing", async () => {
    const m = fakeMachine({ programs: ["apt-get", "git"], env: { RHUMBATRON_SYSTEM_SETUP: "off" } });
    const r = await ensureSystemParts(m.host);
    expect(r).toEqual({ present: ["git"], installed: [], missing: ["chromium", "bubblewrap"] });
    expect(m.ran).toEqual([]);
    expect(m.lines).toEqual([
      expect.stringMatching(/^setup: chromium is missing \(RHUMBATRON_SYSTEM_SETUP=off\)/),
      expect.stringMatching(/^setup: bubblewrap is missing \(RHUMBATRON_SYSTEM_SETUP=off\)/),
    ]);
  });
});
