import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type APIRequestContext, expect, test } from "@playwright/test";
import { DEMO_TENANT, trpcData, trpcMutation } from "./trpc.ts";

/**
 * The real `rhumbatron` CLI as a process against the running product, as a team uses it: an admin's
 * API token made while signed in, the product's address and the token in the environment.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = join(ROOT, "packages/sdk/bin/rhumbatron.js");

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Cli {
  run(...args: string[]): Promise<CliRun>;
  /** `--json` output of a command that must succeed. */
  json<T>(...args: string[]): Promise<T>;
}

/** An admin's token (tokens.create as the signed-in page), and a CLI that uses it. */
export async function cliAsAdmin(api: APIRequestContext): Promise<Cli> {
  const baseURL = String(test.info().project.use.baseURL);
  const { secret } = await trpcData<{ secret: string }>(
    await trpcMutation(api, "tokens.create", {
      tenantId: DEMO_TENANT,
      name: `e2e-cli-${randomBytes(3).toString("hex")}`,
      role: "admin",
    }),
  );
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RHUMBATRON_"))),
    RHUMBATRON_URL: baseURL,
    RHUMBATRON_TOKEN: secret,
  };
  const run = async (...args: string[]): Promise<CliRun> => {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], {
        env,
        maxBuffer: 16 * 1024 * 1024,
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
    }
  };
  const json = async <T>(...args: string[]): Promise<T> => {
    const r = await run("--json", ...args);
    expect(r.code, `rhumbatron ${args.join(" ")}: ${r.stderr}`).toBe(0);
    return JSON.parse(r.stdout) as T;
  };
  return { run, json };
}

export const git = async (cwd: string, ...args: string[]) =>
  (
    await promisify(execFile)("git", ["-c", "user.name=Ada", "-c", "user.email=ada@example.com", ...args], {
      cwd,
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    })
  ).stdout.trim();

/** A team's repository on this host: the files, and one commit on main. */
export async function repositoryOf(
  files: Record<string, string | Uint8Array>,
  message = "the project as it is",
): Promise<{ dir: string; head: string }> {
  const dir = await mkdtemp(join(tmpdir(), "rh-e2e-repo-"));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  await git(dir, "init", "-q", "-b", "main");
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", message);
  return { dir, head: await git(dir, "rev-parse", "HEAD") };
}

export interface ProjectDetail {
  status: string;
  canonicalGeneration: number;
  failureReason: string | null;
}

/** `rhumbatron projects import`, then `projects show` until the worker has imported it. */
export async function importWithCli(cli: Cli, name: string, dir: string): Promise<string> {
  const { projectId } = await cli.json<{ projectId: string }>("projects", "import", name, "--from", dir);
  await expect
    .poll(async () => (await cli.json<ProjectDetail>("projects", "show", projectId)).status, { timeout: 120_000 })
    .toBe("active");
  return projectId;
}

/** `projects show` until the project's canonical generation is `generation` (a promotion landed). */
export async function generationReaches(cli: Cli, projectId: string, generation: number): Promise<void> {
  await expect
    .poll(async () => (await cli.json<ProjectDetail>("projects", "show", projectId)).canonicalGeneration, {
      timeout: 180_000,
    })
    .toBe(generation);
}

export interface WatchEnd {
  outcome: string;
  tasks: { key: string; state: string }[];
  candidate: { id: string; status: string } | null;
}

/** `change create` from a Work Graph file, then `change watch` until the Change or its Candidate is final. */
export async function changeWithCli(
  cli: Cli,
  projectId: string,
  change: Record<string, unknown>,
  land: boolean,
): Promise<{ watch: CliRun; end: WatchEnd; changeId: string }> {
  const dir = await mkdtemp(join(tmpdir(), "rh-e2e-change-"));
  const file = join(dir, "change.json");
  await writeFile(file, JSON.stringify(change));
  const created = await cli.json<{ changeId: string }>(
    "change",
    "create",
    "--project",
    projectId,
    "--file",
    file,
    ...(land ? ["--land"] : []),
  );
  await rm(dir, { recursive: true, force: true });
  const watch = await cli.run("--json", "change", "watch", created.changeId, "--interval", "500");
  const lines = watch.stdout.trim().split("\n");
  return { watch, end: JSON.parse(lines[lines.length - 1] ?? "{}") as WatchEnd, changeId: created.changeId };
}
