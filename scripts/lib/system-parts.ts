/**
 * The setup step: the system programs Rhumbatron needs besides its npm packages. `npm start`,
 * `npm test` and `.ci/run` (through `npm run setup`) all call `ensureSystemParts`, so a fresh
 * machine gets what the README's two commands promise and no caller keeps its own install lines.
 *
 * For each part that is missing: when this machine can install it (root or passwordless sudo, and
 * apt-get), install it and say what and why in one line; otherwise stop with the exact command to
 * run and what will not work without it. `CHROMIUM_PATH` picks a Chromium of one's own;
 * `RHUMBATRON_SYSTEM_SETUP=off` (hosts managed otherwise) only checks and reports.
 */
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { findChromium } from "@rhumbatron/core";
import { StartupError } from "./fail.ts";

export type PartName = "git" | "chromium" | "bubblewrap";

export interface SystemPart {
  name: PartName;
  /** The Debian package that provides it. */
  debianPackage: string;
  /** Why Rhumbatron needs it: said when it is installed. */
  why: string;
  /** What stops working without it: said when it cannot be installed. */
  withoutIt: string;
  /** The path of the program when it is here, else null. */
  find(host: SetupHost): string | null;
}

/** What the setup step sees of the machine; tests pass their own. */
export interface SetupHost {
  env: NodeJS.ProcessEnv;
  /** The effective user ID (0: root). */
  uid: number;
  exists(path: string): boolean;
  /** The absolute path of an executable on PATH, or null. */
  which(command: string): string | null;
  /** Runs a command to its end; output is kept for the error message. */
  run(argv: string[], env?: NodeJS.ProcessEnv): Promise<{ code: number; output: string }>;
  log(line: string): void;
}

export const SYSTEM_PARTS: readonly SystemPart[] = [
  {
    name: "git",
    debianPackage: "git",
    why: "the source service serves clones and pushes with git upload-pack and receive-pack, and the tests compare with command-line git",
    withoutIt:
      "nobody can clone a project or push to it over HTTP, other workers cannot reach the repositories, and the composition tests cannot compare with git",
    find: (h) => h.which("git"),
  },
  {
    name: "chromium",
    debianPackage: "chromium",
    why: "the browser check of every Candidate and the e2e tests run in Chromium",
    withoutIt: "browser checks end in error and the e2e tests cannot run",
    find: (h) => findChromium(h.env, h.exists),
  },
  {
    name: "bubblewrap",
    debianPackage: "bubblewrap",
    why: "the Sandbox isolates agent and check commands with bubblewrap",
    withoutIt: "agent and check commands run as plain processes, NOT isolated (refused with RHUMBATRON_ENV=prod)",
    find: (h) => h.which("bwrap"),
  },
];

export interface SetupReport {
  present: PartName[];
  installed: PartName[];
  /** Missing parts left alone because RHUMBATRON_SYSTEM_SETUP=off. */
  missing: PartName[];
}

export class SetupError extends StartupError {
  override name = "SetupError";
}

/** Checks every part, installs the missing ones where it can, and throws a SetupError where it cannot. */
export async function ensureSystemParts(
  host: SetupHost,
  parts: readonly SystemPart[] = SYSTEM_PARTS,
): Promise<SetupReport> {
  const configured = host.env.CHROMIUM_PATH;
  if (configured && !host.exists(configured)) {
    throw new SetupError(
      `CHROMIUM_PATH is ${configured}, which does not exist; point it at a Chromium or Chrome binary, or unset it`,
    );
  }
  const missing = parts.filter((p) => p.find(host) === null);
  const present = parts.filter((p) => !missing.includes(p)).map((p) => p.name);
  if (missing.length === 0) return { present, installed: [], missing: [] };

  if (setupIsOff(host.env)) {
    for (const p of missing) host.log(`setup: ${p.name} is missing (RHUMBATRON_SYSTEM_SETUP=off): ${p.withoutIt}`);
    return { present, installed: [], missing: missing.map((p) => p.name) };
  }
  const installer = await installerFor(host);
  if (!installer.ok) throw new SetupError(cannotInstall(missing, installer.reason, installer.command));

  for (const p of missing) host.log(`setup: installing ${p.name} (Debian package ${p.debianPackage}): ${p.why}`);
  const env = { ...host.env, DEBIAN_FRONTEND: "noninteractive" };
  const packages = missing.map((p) => p.debianPackage);
  for (const argv of [
    [...installer.prefix, "apt-get", "update", "-qq"],
    [...installer.prefix, "apt-get", "install", "-y", "-qq", ...packages],
  ]) {
    const r = await host.run(argv, env);
    if (r.code !== 0) {
      const tail = r.output.trim().split("\n").slice(-3).join(" | ");
      throw new SetupError(
        `\`${argv.join(" ")}\` failed (exit ${r.code}: ${tail || "no output"}); fix that, or install ${packages.join(" ")} yourself`,
      );
    }
  }
  const stillMissing = missing.filter((p) => p.find(host) === null);
  if (stillMissing.length > 0) {
    throw new SetupError(
      `apt-get installed ${packages.join(" ")} but ${stillMissing.map((p) => p.name).join(", ")} is still not found; ${stillMissing.map((p) => p.withoutIt).join("; ")}`,
    );
  }
  return { present, installed: missing.map((p) => p.name), missing: [] };
}

function setupIsOff(env: NodeJS.ProcessEnv): boolean {
  return ["off", "0", "false", "no"].includes((env.RHUMBATRON_SYSTEM_SETUP ?? "").toLowerCase());
}

type Installer = { ok: true; prefix: string[] } | { ok: false; reason: string; command: string };

async function installerFor(host: SetupHost): Promise<Installer> {
  if (host.which("apt-get") === null) {
    return { ok: false, reason: "this machine has no apt-get", command: "your package manager" };
  }
  if (host.uid === 0) return { ok: true, prefix: [] };
  if (host.which("sudo") !== null && (await host.run(["sudo", "-n", "true"])).code === 0) {
    return { ok: true, prefix: ["sudo", "-n"] };
  }
  return { ok: false, reason: "installing needs root or passwordless sudo", command: "sudo apt-get install -y" };
}

function cannotInstall(missing: SystemPart[], reason: string, command: string): string {
  const what = missing.map((p) => `${p.name} (${p.withoutIt})`).join("; ");
  const run =
    command === "your package manager"
      ? `install ${missing.map((p) => p.name).join(" and ")} with your package manager`
      : `run \`${command} ${missing.map((p) => p.debianPackage).join(" ")}\``;
  return `missing: ${what}. ${reason}: ${run}, then try again (or set CHROMIUM_PATH for a Chromium of your own, or RHUMBATRON_SYSTEM_SETUP=off to go on without them)`;
}

/** This machine, as the setup step sees it. */
export function machineHost(log: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): SetupHost {
  return {
    env: process.env,
    uid: process.getuid?.() ?? -1,
    exists: existsSync,
    which: (command) => {
      for (const dir of (process.env.PATH ?? "").split(delimiter)) {
        if (!dir) continue;
        const candidate = join(dir, command);
        try {
          accessSync(candidate, constants.X_OK);
          return candidate;
        } catch {
          // not in this folder
        }
      }
      return null;
    },
    run: (argv, env) =>
      new Promise((resolve) => {
        const [command, ...args] = argv;
        if (!command) return resolve({ code: 1, output: "empty command" });
        const child = spawn(command, args, { env: env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
        let output = "";
        child.stdout.on("data", (b: Buffer) => (output += b.toString()));
        child.stderr.on("data", (b: Buffer) => (output += b.toString()));
        child.on("error", (e) => resolve({ code: 127, output: e.message }));
        child.on("close", (code) => resolve({ code: code ?? 1, output }));
      }),
    log,
  };
}
