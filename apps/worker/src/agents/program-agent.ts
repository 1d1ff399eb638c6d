import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  type AgentOutcome,
  type AgentTask,
  type ProgramAgent,
  redactSecrets,
  type SandboxWorkspace,
  type SecretValues,
} from "@rhumbatron/core";
import { withAllowedHosts } from "../sandbox/registry-proxy.ts";
import { type CommandAgentStack, handOver, judgeRun, outputTail } from "./command-agent.ts";
import type { InstalledProgram } from "./programs/install.ts";
import { PRESETS, PRIVATE_HOME, type ProgramPreset } from "./programs/presets.ts";
import type { TranscriptStep } from "./programs/transcript.ts";

/**
 * A program Agent (docs/agents.md, Choosing the Agent): one of the coding-agent programs the worker
 * installed (programs/install.ts), run once in the Sandbox in the Task's checkout the way its preset
 * says (programs/presets.ts), handed the Task like a command Agent (command-agent.ts). It has no
 * network but its model endpoint: a proxy on the host lets through that one host:port and nothing
 * else (sandbox/registry-proxy.ts). Its key is a tenant secret, given to this run as an environment
 * variable only, and cleared from everything the run keeps (its transcript, its failure's output).
 *
 * Its token limit (`maxTokens`) is watched while it runs: each line of its JSON output is read as it
 * comes, and once the tokens it reported pass the limit its process group is killed (as past its
 * wall time) and the run fails with nothing published. A program that reports tokens only at its
 * end (Claude Code, Codex and Gemini CLI print them in their last event; OpenCode after each model
 * call) is judged then.
 */
export interface ProgramRunResult {
  outcome: AgentOutcome;
  /** What the program did, read from its JSON output, secrets cleared. */
  steps: TranscriptStep[];
  /** Tokens and cost as the program reported them (0 when it reported none). */
  usage: { inputTokens: number; outputTokens: number; costUsd: number | null };
  /** What the run asked the proxy for, as host:port. */
  network: { reached: string[]; refused: string[] };
}

/** The `host:port` a model endpoint URL names (80 and 443 when it names none). */
export function endpointHostPort(endpoint: string): string {
  const url = new URL(endpoint);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return `${url.hostname}:${port}`;
}

/**
 * Reads a program's stdout as it comes (one JSON event a line) and calls `over` once the tokens its
 * events reported pass `maxTokens`.
 */
export function tokenWatch(preset: ProgramPreset, maxTokens: number | undefined, over: (tokens: number) => void) {
  let partial = "";
  let tokens = 0;
  let passed = false;
  return {
    see(chunk: string) {
      if (maxTokens === undefined || passed) return;
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        for (const s of preset.parse(line)) if (s.kind === "usage") tokens += s.inputTokens + s.outputTokens;
      }
      if (tokens > maxTokens) {
        passed = true;
        over(tokens);
      }
    },
    /** The tokens counted when the limit was passed, or null when it never was. */
    stoppedAt: () => (passed ? tokens : null),
  };
}

/** `value` (any JSON) with every form of each secret's value replaced by its marker (core redactSecrets). */
export function clearSecrets<T>(value: T, secrets: SecretValues): T {
  return JSON.parse(redactSecrets(JSON.stringify(value), secrets)) as T;
}

export async function runProgramAgent(
  ws: SandboxWorkspace,
  agent: ProgramAgent,
  installed: InstalledProgram,
  task: AgentTask,
  stack: readonly CommandAgentStack[],
  opts: { apiKey: string; signal?: AbortSignal },
): Promise<ProgramRunResult> {
  const preset = PRESETS[agent.program];
  const given = await handOver(ws, task, stack);
  const built = preset.build({
    prompt: given.prompt,
    model: agent.model,
    baseUrl: agent.endpoint.replace(/\/+$/, ""),
    apiKey: opts.apiKey,
  });
  for (const [rel, text] of Object.entries(built.home ?? {})) {
    const file = join(ws.path, PRIVATE_HOME, rel);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  const stop = new AbortController();
  const watch = tokenWatch(preset, agent.maxTokens, () => stop.abort());
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  const {
    result: r,
    reached,
    refused,
  } = await withAllowedHosts([endpointHostPort(agent.endpoint)], (network) =>
    ws.run({
      argv: [installed.command, ...built.argv.slice(1)],
      allow: [installed.command],
      env: { ...given.env, ...built.env },
      timeoutMs: agent.timeoutSeconds * 1000,
      stdin: "",
      network,
      signal,
      onStdout: watch.see,
    }),
  );
  const secrets = { [agent.keySecret]: opts.apiKey };
  const steps = clearSecrets(preset.parse(r.stdout), secrets);
  const usage = { inputTokens: 0, outputTokens: 0, costUsd: null as number | null };
  for (const s of steps) {
    if (s.kind !== "usage") continue;
    usage.inputTokens += s.inputTokens;
    usage.outputTokens += s.outputTokens;
    if (s.costUsd !== undefined) usage.costUsd = (usage.costUsd ?? 0) + s.costUsd;
  }
  // Its stdout is JSON events: the failure quotes its stderr and the last error it reported.
  const errors = steps.filter((s) => s.kind === "error").map((s) => s.message);
  const output = clearSecrets(outputTail({ stdout: errors.slice(-3).join("\n"), stderr: r.stderr }).trim(), secrets);
  let outcome = await judgeRun(agent.program, r, given, agent.timeoutSeconds, output);
  const tokens = usage.inputTokens + usage.outputTokens;
  const stoppedAt = watch.stoppedAt();
  if (stoppedAt !== null && outcome.status !== "completed" && !outcome.summary.startsWith("refused:")) {
    // Killed for its tokens while it ran (not for a cancel or its wall time, which killed it first).
    outcome = {
      status: "failed",
      summary: `stopped: ${agent.program} used ${Math.max(tokens, stoppedAt)} tokens, past its limit of ${agent.maxTokens}, and was killed; nothing was published`,
      steps: 1,
    };
  } else if (outcome.status === "completed" && agent.maxTokens !== undefined && tokens > agent.maxTokens) {
    outcome = {
      status: "failed",
      summary: `stopped: ${agent.program} used ${tokens} tokens, past its limit of ${agent.maxTokens}; nothing was published`,
      steps: 1,
    };
  } else if (outcome.status === "completed") {
    const said = [...steps].reverse().find((s) => s.kind === "message");
    const last = said?.kind === "message" ? said.text.trim().split("\n").at(-1) : "";
    outcome = { ...outcome, summary: `${agent.program} exited 0${last ? `: ${last}` : ""}` };
  }
  return { outcome, steps, usage, network: { reached, refused } };
}
