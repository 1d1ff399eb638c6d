import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig, parseSettings, requiresIsolation, settingsSchema } from "@rhumbatron/core";
import { describe, expect, it } from "vitest";
import { exposureRefusal } from "./lib/exposure.ts";

/**
 * The production topology's files (docs/deploy.md, "Several hosts") against the code, so they cannot
 * drift: the systemd units in deploy/systemd, the environment files in deploy/env and the web app's
 * vercel.json. Every variable they set is a setting the processes read (settingsSchema) or one of
 * OTHER_VARIABLES; filled in, each environment passes prod's own checks as its unit hands it over.
 */
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

const SOURCE_UNIT = "deploy/systemd/rhumbatron-source.service";
const WORKER_UNIT = "deploy/systemd/rhumbatron-worker@.service";
const SOURCE_ENV = "deploy/env/source.env.example";
const WORKER_ENV = "deploy/env/worker.env.example";
/** Where the units expect the checkout (WorkingDirectory) and the command that starts a worker in it. */
const CHECKOUT = "/opt/rhumbatron";
const EXEC_START = "/usr/bin/node --import tsx apps/worker/src/main.ts";

/** Variables the files may set that are not Rhumbatron settings, and what reads them. */
const OTHER_VARIABLES: Record<string, string> = {
  NODE_ENV: "Node.js and libraries: production",
  PATH: "where the worker finds git and bubblewrap (systemd's default serves)",
};

/** The values that must be the same in every process of an installation (and on the web app). */
const SHARED = [
  "RHUMBATRON_ENV",
  "DATABASE_URL",
  "RHUMBATRON_AUTH_SECRET",
  "RHUMBATRON_EXECUTOR",
  "RHUMBATRON_FUNCTION_HOST",
  "INNGEST_EVENT_KEY",
  "INNGEST_SIGNING_KEY",
  "RHUMBATRON_BLOB_STORE",
  "RHUMBATRON_S3_ENDPOINT",
  "RHUMBATRON_S3_BUCKET",
  "RHUMBATRON_S3_REGION",
  "RHUMBATRON_S3_ACCESS_KEY_ID",
  "RHUMBATRON_S3_SECRET_ACCESS_KEY",
  "RHUMBATRON_S3_PREFIX",
];

/** A sample value for each `<placeholder>` of the examples, valid where it stands. */
const SAMPLES: Record<string, string> = {
  "db-password": "sample-password",
  "db-host": "db.internal.example",
  "auth-secret": "c2FtcGxlLXNlY3JldC1mb3ItdGhlLWRlcGxveS10ZXN0",
  "source-private-address": "10.0.0.5",
  "inngest-event-key": "sample-event-key",
  "inngest-signing-key": "signkey-prod-0123456789abcdef",
  "account-id": "0123456789abcdef",
  bucket: "rhumbatron-blobs",
  "s3-access-key-id": "SAMPLEACCESSKEYID",
  "s3-secret-access-key": "sample-secret-access-key",
};

interface EnvFile {
  /** KEY=value lines, as systemd reads them. */
  active: Map<string, string>;
  /** `# KEY=value` lines: optional settings, shown switched off. */
  commented: string[];
  /** Active keys whose line is not right below a comment. */
  uncommented: string[];
  /** Lines that are none of these. */
  malformed: string[];
}

const KEY_LINE = /^([A-Z][A-Z0-9_]*)=(.*)$/;

function parseEnvFile(text: string): EnvFile {
  const file: EnvFile = { active: new Map(), commented: [], uncommented: [], malformed: [] };
  let previous = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const active = KEY_LINE.exec(line);
    const commented = /^#\s*([A-Z][A-Z0-9_]*)=/.exec(line);
    if (active) {
      file.active.set(active[1] as string, active[2] as string);
      if (!previous.startsWith("#")) file.uncommented.push(active[1] as string);
    } else if (commented) file.commented.push(commented[1] as string);
    else if (line !== "" && !line.startsWith("#")) file.malformed.push(line);
    previous = line;
  }
  return file;
}

/** Names that are neither a setting nor one of OTHER_VARIABLES. */
function unknownKeys(keys: Iterable<string>): string[] {
  const settings = new Set(Object.keys(settingsSchema.shape));
  return [...keys].filter((k) => !settings.has(k) && !(k in OTHER_VARIABLES));
}

type Unit = Map<string, string[]>;

/** A unit file as `Section.Key` → its values in order (Environment= and EnvironmentFile= repeat). */
function parseUnit(text: string): Unit {
  const unit: Unit = new Map();
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) {
      section = header[1] as string;
      continue;
    }
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`not a Key=Value line in [${section}]: ${line}`);
    const key = `${section}.${line.slice(0, eq)}`;
    unit.set(key, [...(unit.get(key) ?? []), line.slice(eq + 1)]);
  }
  return unit;
}

const one = (unit: Unit, key: string) => unit.get(key)?.at(-1);

/** The variables a unit's Environment= lines set, with `%i` standing for the instance. */
function unitEnvironment(unit: Unit, instance = "1"): Record<string, string> {
  const env: Record<string, string> = {};
  for (const value of unit.get("Service.Environment") ?? []) {
    for (const [, key = "", v = ""] of value.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=(\S*)/g)) {
      env[key] = v.replaceAll("%i", instance);
    }
  }
  return env;
}

/** systemd's time spans as the units write them: 5s, 300s, 2min, or plain seconds. */
function seconds(span: string | undefined): number {
  const m = /^(\d+)\s*(ms|s|sec|min|m)?$/.exec(span ?? "");
  if (!m) return Number.NaN;
  const n = Number(m[1]);
  return m[2] === "ms" ? n / 1000 : m[2] === "min" || m[2] === "m" ? n * 60 : n;
}

/** The example with every `<placeholder>` replaced by its sample; an unknown placeholder throws. */
function filledIn(file: EnvFile): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of file.active) {
    env[key] = value.replace(/<([a-z0-9-]+)>/g, (_, name: string) => {
      const sample = SAMPLES[name];
      if (sample === undefined) throw new Error(`${key}: no sample value for the placeholder <${name}>`);
      return sample;
    });
  }
  return env;
}

/** What keeps these settings from running a worker of a production installation on several hosts. */
function prodProblems(env: Record<string, string>): string[] {
  let s: ReturnType<typeof parseSettings>;
  try {
    s = parseSettings(env);
  } catch (err) {
    return [`parseSettings: ${(err as Error).message}`];
  }
  const problems = [
    s.RHUMBATRON_ENV !== "prod" && "RHUMBATRON_ENV is not prod",
    exposureRefusal(s),
    !s.DATABASE_URL && "no DATABASE_URL (the worker refuses to start without one)",
    !s.RHUMBATRON_AUTH_SECRET && "no RHUMBATRON_AUTH_SECRET (workers prove themselves to the source service with it)",
    s.RHUMBATRON_BLOB_STORE !== "s3" && "blobs are not in S3 (the hosts share no disk)",
    !requiresIsolation(s) && "agent commands may run unisolated",
    !s.RHUMBATRON_DATA_DIR.startsWith("/") && "RHUMBATRON_DATA_DIR is not an absolute path",
    s.RHUMBATRON_FUNCTION_HOST === "split" && s.RHUMBATRON_EXECUTOR !== "inngest" && "split needs the Inngest executor",
  ];
  if (s.RHUMBATRON_EXECUTOR === "inngest") {
    problems.push(
      !s.INNGEST_SIGNING_KEY && "no INNGEST_SIGNING_KEY (the serve handler refuses to start without one)",
      !s.INNGEST_EVENT_KEY && "no INNGEST_EVENT_KEY (nudges are Inngest events)",
      s.INNGEST_DEV !== undefined && "INNGEST_DEV talks to a dev server",
    );
  }
  return problems.filter((p): p is string => typeof p === "string");
}

const sourceUnit = parseUnit(read(SOURCE_UNIT));
const workerUnit = parseUnit(read(WORKER_UNIT));
const sourceEnv = parseEnvFile(read(SOURCE_ENV));
const workerEnv = parseEnvFile(read(WORKER_ENV));
/** What each process gets: its unit's Environment= first, then its environment file (which wins). */
const sourceProcess = () => ({ ...unitEnvironment(sourceUnit), ...filledIn(sourceEnv) });
const workerProcess = () => ({ ...unitEnvironment(workerUnit), ...filledIn(workerEnv) });

describe("the checks can fail", () => {
  it("finds an unknown key, a key without its comment, a stray line and a prod problem", () => {
    const planted = parseEnvFile(
      "# ok\nRHUMBATRON_ENV=prod\nRHUMBATRON_SORCE_URL=x\n# RHUMBATRON_DATADIR=/x\nnonsense\n",
    );
    expect(unknownKeys([...planted.active.keys(), ...planted.commented])).toEqual([
      "RHUMBATRON_SORCE_URL",
      "RHUMBATRON_DATADIR",
    ]);
    expect(planted.uncommented).toEqual(["RHUMBATRON_SORCE_URL"]);
    expect(planted.malformed).toEqual(["nonsense"]);
    expect(prodProblems({ RHUMBATRON_ENV: "prod" })[0]).toMatch(/RHUMBATRON_AUTH_SECRET is required/);
    const sample = { ...sourceProcess(), RHUMBATRON_BLOB_STORE: "local", RHUMBATRON_ALLOW_UNISOLATED: "1" };
    expect(prodProblems(sample)).toEqual([
      "blobs are not in S3 (the hosts share no disk)",
      "agent commands may run unisolated",
    ]);
  });
});

describe("deploy/env examples", () => {
  it("name only settings the processes read (settingsSchema) or the variables listed in OTHER_VARIABLES", () => {
    for (const file of [sourceEnv, workerEnv]) {
      expect(unknownKeys([...file.active.keys(), ...file.commented])).toEqual([]);
      expect(file.malformed).toEqual([]);
    }
    for (const unit of [sourceUnit, workerUnit]) expect(unknownKeys(Object.keys(unitEnvironment(unit)))).toEqual([]);
  });

  it("say in a comment line above each key what it is for", () => {
    expect(sourceEnv.uncommented).toEqual([]);
    expect(workerEnv.uncommented).toEqual([]);
  });

  it("are complete for prod once the placeholders are filled in, as the units hand them over", () => {
    expect(prodProblems(sourceProcess())).toEqual([]);
    expect(prodProblems(workerProcess())).toEqual([]);
  });

  it("do not start as they are: the placeholders are refused", () => {
    for (const file of [sourceEnv, workerEnv]) {
      expect(() => parseSettings(Object.fromEntries(file.active))).toThrow(/RHUMBATRON_AUTH_SECRET/);
    }
  });

  it("point every worker at the source service, and the source service at none", () => {
    const source = parseSettings(sourceProcess());
    const worker = parseSettings(workerProcess());
    expect(source.RHUMBATRON_SOURCE_URL).toBeUndefined();
    expect([...sourceEnv.active.keys(), ...sourceEnv.commented]).not.toContain("RHUMBATRON_SOURCE_URL");
    expect(worker.RHUMBATRON_SOURCE_URL).toBeDefined();
    // The source service's git port, at the address it listens on.
    const url = new URL(worker.RHUMBATRON_SOURCE_URL as string);
    expect({ host: url.hostname, port: Number(url.port) }).toEqual({
      host: source.HOST,
      port: source.RHUMBATRON_GIT_PORT,
    });
  });

  it("agree on everything the processes of one installation must share", () => {
    for (const key of SHARED) {
      expect(sourceEnv.active.get(key), key).toBeDefined();
      expect(workerEnv.active.get(key), key).toBe(sourceEnv.active.get(key));
    }
  });

  it("leave each worker instance the data folder its unit gives it", () => {
    expect(workerEnv.active.has("RHUMBATRON_DATA_DIR")).toBe(false);
    expect(unitEnvironment(workerUnit, "7").RHUMBATRON_DATA_DIR).toBe("/var/lib/rhumbatron/worker-7");
    expect(one(workerUnit, "Service.StateDirectory")).toBe("rhumbatron/worker-%i");
    // The source service's folder is the one systemd creates for its user.
    expect(sourceEnv.active.get("RHUMBATRON_DATA_DIR")).toBe(`/var/lib/${one(sourceUnit, "Service.StateDirectory")}`);
  });
});

describe("deploy/systemd units", () => {
  const units = { [SOURCE_UNIT]: sourceUnit, [WORKER_UNIT]: workerUnit };

  it("start the worker from the checkout, with a file and a loader that exist", () => {
    for (const [name, unit] of Object.entries(units)) {
      expect(one(unit, "Service.ExecStart"), name).toBe(EXEC_START);
      expect(one(unit, "Service.WorkingDirectory"), name).toBe(CHECKOUT);
      const [node, flag, loader, script] = EXEC_START.split(" ");
      expect([node, flag]).toEqual(["/usr/bin/node", "--import"]);
      expect(existsSync(join(ROOT, script as string)), script).toBe(true);
      // `--import tsx` resolves from the checkout: npm ci installs it there (a dev dependency, so not --omit=dev).
      expect(() => createRequire(join(ROOT, "package.json")).resolve(loader as string)).not.toThrow();
    }
  });

  it("run as a dedicated user, restart always and stop with SIGTERM, leaving the worker time to finish", () => {
    // The worker waits for its runs in flight on SIGTERM (apps/worker/src/main.ts, stopOnSignals): at
    // least one Sandbox command's hard timeout and one model call must fit before SIGKILL.
    const step = loadConfig("prod").sandbox.commandTimeoutSeconds + parseSettings({}).AGENT_MODEL_TIMEOUT_MS / 1000;
    for (const [name, unit] of Object.entries(units)) {
      const user = one(unit, "Service.User");
      expect(user && user !== "root", name).toBe(true);
      expect(one(unit, "Service.Restart"), name).toBe("always");
      const restartSec = seconds(one(unit, "Service.RestartSec"));
      expect(restartSec >= 1 && restartSec <= 60, `${name} RestartSec ${restartSec}`).toBe(true);
      expect(one(unit, "Service.KillSignal"), name).toBe("SIGTERM");
      // SIGTERM to the worker alone: its Sandbox commands finish; SIGKILL to the rest after the timeout.
      expect(one(unit, "Service.KillMode"), name).toBe("mixed");
      expect(seconds(one(unit, "Service.TimeoutStopSec")), name).toBeGreaterThan(step);
      expect(one(unit, "Install.WantedBy"), name).toBe("multi-user.target");
    }
  });

  it("read the environment files deploy/env shows, the source service's without RHUMBATRON_SOURCE_URL", () => {
    expect(sourceUnit.get("Service.EnvironmentFile")).toEqual(["/etc/rhumbatron/source.env"]);
    expect(workerUnit.get("Service.EnvironmentFile")).toEqual([
      "/etc/rhumbatron/worker.env",
      // Optional (the leading -), read last: settings of one instance, such as its own worker port.
      "-/etc/rhumbatron/worker-%i.env",
    ]);
    expect(unitEnvironment(sourceUnit).RHUMBATRON_SOURCE_URL).toBeUndefined();
    expect(read(SOURCE_UNIT)).not.toMatch(/^[^#\n]*RHUMBATRON_SOURCE_URL/m);
  });

  it("systemd-analyze verify has nothing to say about them (reported in the output when it is not installed)", () => {
    const probe = spawnSync("systemd-analyze", ["--version"], { encoding: "utf8" });
    if (probe.error) {
      process.stdout.write(
        "deploy-files: systemd-analyze is not installed here, so systemd did not verify the units; every other check ran\n",
      );
      return;
    }
    // An instance of the template is verified through the template (%i expanded).
    const paths = [SOURCE_UNIT, WORKER_UNIT.replace("@.service", "@1.service")].map((p) => join(ROOT, p));
    const r = spawnSync("systemd-analyze", ["verify", "--man=no", ...paths], { encoding: "utf8" });
    const said = `${r.stdout}${r.stderr}`.split("\n").filter((l) => l.includes("rhumbatron"));
    process.stdout.write(
      `deploy-files: ${probe.stdout.split("\n")[0]}; verify exit ${r.status}: ${said.length ? said.join(" | ") : "no remarks"}\n`,
    );
    expect({ status: r.status, said }).toEqual({ status: 0, said: [] });
  });
});

/** Keys Vercel documents for vercel.json (vercel.com/docs/project-configuration) that a file here may use. */
const VERCEL_KEYS = [
  "$schema",
  "framework",
  "installCommand",
  "buildCommand",
  "devCommand",
  "ignoreCommand",
  "outputDirectory",
  "functions",
  "regions",
  "crons",
  "headers",
  "redirects",
  "rewrites",
  "cleanUrls",
  "trailingSlash",
];
const VERCEL_FUNCTION_KEYS = ["maxDuration", "memory", "includeFiles", "excludeFiles"];

describe("vercel.json", () => {
  // The Vercel project's Root Directory is apps/web (docs/deploy.md): Vercel reads the vercel.json there.
  const webRoot = join(ROOT, "apps/web");

  it("is the web app's, in its Root Directory, and there is no other one Vercel would ignore", () => {
    expect(existsSync(join(webRoot, "vercel.json"))).toBe(true);
    expect(existsSync(join(ROOT, "vercel.json"))).toBe(false);
  });

  it("parses, uses only keys Vercel documents and gives /api/inngest a time limit in a file that exists", () => {
    const vercel = JSON.parse(read("apps/web/vercel.json")) as Record<string, unknown>;
    expect(Object.keys(vercel).filter((k) => !VERCEL_KEYS.includes(k))).toEqual([]);
    const functions = (vercel.functions ?? {}) as Record<string, Record<string, unknown>>;
    for (const [path, config] of Object.entries(functions)) {
      expect(existsSync(join(webRoot, path)), path).toBe(true);
      expect(
        Object.keys(config).filter((k) => !VERCEL_FUNCTION_KEYS.includes(k)),
        path,
      ).toEqual([]);
    }
    const inngest = functions["src/app/api/inngest/route.ts"]?.maxDuration;
    expect(Number.isInteger(inngest) && (inngest as number) > 0).toBe(true);
  });
});
