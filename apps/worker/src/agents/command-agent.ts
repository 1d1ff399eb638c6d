import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AgentOutcome,
  type AgentTask,
  type CommandAgent,
  type CommandResult,
  redactSecrets,
  type SandboxWorkspace,
  type SecretValues,
} from "@rhumbatron/core";

/**
 * A command Agent (docs/agents.md, Choosing the Agent): a program the admin named, run once, without a
 * terminal, inside the Sandbox in the Task's checkout. It is told the Task through a file and an
 * environment variable and pointed at the run's Context Packet; it edits the working tree and exits.
 * Exit 0 is done; the runner then commits and publishes the diff like any Agent's. Any other exit, or
 * running past its limit, fails the run and nothing is published.
 *
 * What it is handed lives under `.git/rhumbatron/` in the checkout: inside the Sandbox, and never
 * part of a commit. What it may not touch, `.git`'s configuration and hooks, is fingerprinted
 * before it starts and checked after it ends (gitTamper); its edits to the checks file are refused
 * by the runner when it reads the diff (agents/runner.ts).
 */

/** Where the run's instructions go, relative to the checkout. */
export const TASK_FILE = ".git/rhumbatron/task.md";
export const CONTEXT_FILE = ".git/rhumbatron/context.json";
/** The prompt in the environment is cut at this many bytes; the file always holds all of it. */
const PROMPT_ENV_MAX = 16 * 1024;
/** Lines of the program's output a failure quotes. */
const TAIL_LINES = 12;

export interface CommandAgentStack {
  taskKey: string;
  paths: readonly string[];
}

/** The Task in words, as a person would brief a colleague: what, where, and what came before. */
export function taskPrompt(task: AgentTask, stack: readonly CommandAgentStack[]): string {
  const lines = [`# ${task.title}`, "", `Part of the Change "${task.changeTitle}".`];
  if (task.changeDescription.trim()) lines.push("", task.changeDescription.trim());
  const declared = [...task.intents.paths, ...task.intents.prefixes.map((p) => `${p} (and below)`)];
  lines.push(
    "",
    "## Where",
    declared.length
      ? `Edit only these paths: ${declared.join(", ")}.`
      : "The Task declares no paths; keep the edit to what the title asks.",
  );
  if (stack.length) {
    lines.push("", "## Done before this Task (already in your checkout)");
    for (const s of stack) lines.push(`- ${s.taskKey}: ${s.paths.join(", ") || "no files"}`);
  }
  // What the run's Context Packet says of itself: why this Task runs again (a conflict), or how its index was made.
  if (task.context?.note) lines.push("", "## Note", task.context.note);
  lines.push(
    "",
    "## How",
    `Edit the files in this checkout, then exit 0. The files most likely to matter are listed in ${CONTEXT_FILE}.`,
    "Do not commit, push, or edit .git or .rhumbatron/: the work is committed and checked for you.",
  );
  return `${lines.join("\n")}\n`;
}

/** A fingerprint of what in `.git` decides what git runs or where it points: config, hooks, info. */
export async function gitControlFiles(checkout: string): Promise<string> {
  const hash = createHash("sha256");
  const add = async (rel: string) => {
    const bytes = await readFile(join(checkout, rel)).catch(() => null);
    hash.update(`${rel}\0${bytes === null ? "-" : createHash("sha256").update(bytes).digest("hex")}\n`);
  };
  await add(".git/config");
  for (const dir of [".git/hooks", ".git/info"]) {
    const names = await readdir(join(checkout, dir)).catch(() => [] as string[]);
    for (const name of names.sort()) await add(`${dir}/${name}`);
  }
  return hash.digest("hex");
}

function tail(text: string): string {
  const lines = text.trimEnd().split("\n");
  return lines.slice(-TAIL_LINES).join("\n");
}

/** What the program is handed and what it may not change, fixed before it starts (handOver). */
export interface HandOver {
  prompt: string;
  /** The variables every Agent program gets: the Task, where its files are, its paths. */
  env: Record<string, string>;
  /** Whether it changed `.git`'s configuration, hooks or info since the hand-over. */
  gitTampered(): Promise<boolean>;
}

/** Writes the Task and its Context Packet into the checkout and fingerprints `.git`'s control files. */
export async function handOver(
  ws: SandboxWorkspace,
  task: AgentTask,
  stack: readonly CommandAgentStack[],
): Promise<HandOver> {
  const prompt = taskPrompt(task, stack);
  await mkdir(join(ws.path, ".git", "rhumbatron"), { recursive: true });
  await writeFile(join(ws.path, TASK_FILE), prompt);
  await writeFile(join(ws.path, CONTEXT_FILE), `${JSON.stringify(task.context ?? null, null, 2)}\n`);
  const before = await gitControlFiles(ws.path);
  const declared = [...task.intents.paths, ...task.intents.prefixes];
  return {
    prompt,
    env: {
      RHUMBATRON_TASK: Buffer.from(prompt).subarray(0, PROMPT_ENV_MAX).toString("utf8"),
      RHUMBATRON_TASK_FILE: TASK_FILE,
      RHUMBATRON_CONTEXT_FILE: CONTEXT_FILE,
      RHUMBATRON_TASK_KEY: task.key,
      RHUMBATRON_TASK_PATHS: declared.join("\n"),
    },
    gitTampered: async () => (await gitControlFiles(ws.path)) !== before,
  };
}

/**
 * How a program's run ended, in the words the run records: refused when it changed `.git`'s
 * control files, stopped past its limit, failed on a non-zero exit, else completed. `output` is
 * already cut to its last lines and cleared of secrets by the caller.
 */
export async function judgeRun(
  program: string,
  r: CommandResult,
  given: HandOver,
  timeoutSeconds: number,
  output: string,
): Promise<AgentOutcome> {
  if (await given.gitTampered()) {
    return {
      status: "failed",
      summary: `refused: ${program} changed .git's configuration, hooks or info; nothing was published`,
      steps: 1,
    };
  }
  if (r.timedOut) {
    return {
      status: "failed",
      summary: `stopped: ${program} ran past its limit of ${timeoutSeconds} s and was killed; nothing was published${output ? `\n${output}` : ""}`,
      steps: 1,
    };
  }
  if (r.exitCode !== 0) {
    const how = r.exitCode === null ? `was killed (${r.signal ?? "signal"})` : `exited ${r.exitCode}`;
    return {
      status: "failed",
      summary: `${program} ${how}; nothing was published${output ? `\n${output}` : ""}`,
      steps: 1,
    };
  }
  return {
    status: "completed",
    summary: `${program} exited 0${output ? `: ${output.split("\n").at(-1)}` : ""}`,
    steps: 1,
  };
}

/** The last lines of a run's output, the part a failure quotes. */
export function outputTail(r: Pick<CommandResult, "stdout" | "stderr">): string {
  return tail([r.stdout, r.stderr].filter((t) => t.trim()).join("\n"));
}

/**
 * Runs the command Agent in `ws` (the Task's checkout, already at its start). Returns the outcome
 * the runner records; throws only for this system's own failures (a refused command, a lost Sandbox).
 */
export async function runCommandAgent(
  ws: SandboxWorkspace,
  agent: CommandAgent,
  task: AgentTask,
  stack: readonly CommandAgentStack[],
  opts: { secrets?: SecretValues; signal?: AbortSignal } = {},
): Promise<AgentOutcome> {
  const given = await handOver(ws, task, stack);
  const secrets = opts.secrets ?? {};
  const r = await ws.run({
    argv: [...agent.argv],
    allow: [agent.argv[0]],
    timeoutMs: agent.timeoutSeconds * 1000,
    // The tenant secrets it was given, each as the variable of its name; the Task's own come last.
    env: { ...secrets, ...given.env },
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  return judgeRun(agent.argv[0], r, given, agent.timeoutSeconds, redactSecrets(outputTail(r), secrets));
}
