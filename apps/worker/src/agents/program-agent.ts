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
import { PRESETS } from "./programs/presets.ts";
import type { TranscriptStep } from "./programs/transcript.ts";

/**
 * A program Agent (docs/agents.md, Choosing the Agent): one of the coding-agent programs the worker
 * installed (programs/install.ts), run once in the Sandbox in the Task's checkout the way its preset
 * says (programs/presets.ts), handed the Task like a command Agent (command-agent.ts). It has no
 * network but its model endpoint: a proxy on the host lets through that one host:port and nothing
 * else (sandbox/registry-proxy.ts). Its key is a tenant secret, given to this run as an environment
 * variable only, and cleared from everything the run keeps (its transcript, its failure's output).
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
      ...(opts.signal ? { signal: opts.signal } : {}),
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
  if (outcome.status === "completed" && agent.maxTokens !== undefined && tokens > agent.maxTokens) {
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
