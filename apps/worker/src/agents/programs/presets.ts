import type { AgentProgramName } from "./install.ts";
import { jsonLines, summarize, type TranscriptStep } from "./transcript.ts";

/**
 * How to run each coding-agent program non-interactively inside the Sandbox, and how to read what
 * it prints (docs/coding-agents.md, "Claude Code, Codex, Gemini CLI and OpenCode"). What each switch is for was checked by
 * running the programs against the stand-in model servers (packages/fixtures/src/*-stand-in.ts;
 * apps/worker/src/agents/programs/programs.test.ts).
 *
 * Both programs run inside our Sandbox (bubblewrap), so their own permission prompts and sandboxes
 * are switched off or widened: the Sandbox is the boundary. Nothing is written into the workspace:
 * their state goes to the Sandbox's private /tmp (a fresh tmpfs per command, gone afterwards), and
 * the API key reaches them only as an environment variable (never a file, never argv).
 */
export interface ProgramRunInput {
  /** The Task's instructions. */
  prompt: string;
  /** The model name the endpoint expects. */
  model: string;
  /** The model endpoint's base URL, without `/v1` (e.g. http://model.internal:8080). */
  baseUrl: string;
  /** The secret the run was given for the model endpoint. */
  apiKey: string;
}

export interface ProgramRun {
  /** argv[0] is the program's bare command name (InstalledProgram.command). */
  argv: string[];
  env: Record<string, string>;
  /**
   * Settings files the runner writes into the run's private home (PRIVATE_HOME, relative to it)
   * before the program starts. Never a secret: the key reaches the program only through `env`.
   */
  home?: Record<string, string>;
}

/**
 * The run's private home, relative to the workspace (the program starts at its root): under `.git`,
 * so nothing there is ever committed, and gone with the run's workspace. The Sandbox's HOME is the
 * workspace itself, so a program that keeps its state under HOME is pointed here or at /tmp.
 */
export const PRIVATE_HOME = ".git/rhumbatron/home";

export interface ProgramPreset {
  name: AgentProgramName;
  /** The wire format of the model endpoint it calls. */
  wire: "anthropic-messages" | "openai-responses" | "gemini";
  build(input: ProgramRunInput): ProgramRun;
  /** Its stdout (JSON lines) as transcript steps. */
  parse(stdout: string): TranscriptStep[];
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** Text of a tool_result's content (a string or a list of text blocks). */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((c) => str(obj(c).text) ?? "").join("");
  return "";
}

/**
 * Without these Claude Code 2.1.332 also tries api.anthropic.com:443 (refused by the proxy;
 * programs.test.ts shows it), besides the model endpoint.
 */
export const CLAUDE_CODE_QUIET_ENV: Readonly<Record<string, string>> = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_ERROR_REPORTING: "1",
};

/** Without these Codex 0.171.0 also tries github.com, api.github.com and ab.chatgpt.com (all port 443). */
export const CODEX_QUIET_CONFIG: readonly string[] = [
  "features.plugins=false",
  "analytics.enabled=false",
  "check_for_update_on_startup=false",
];

/**
 * Claude Code: `claude -p <prompt> --output-format stream-json --verbose`. `--permission-mode
 * acceptEdits` lets its Edit/Write tools write without a prompt and `--allowedTools` adds Bash (so
 * it runs the project's commands), which works whatever the uid (`--dangerously-skip-permissions`
 * refuses to run as root). The switches in env keep it from calling anything but the model
 * endpoint (PLATFORM.md: with them it makes only `POST /v1/messages?beta=true`).
 */
export const claudeCode: ProgramPreset = {
  name: "claude-code",
  wire: "anthropic-messages",
  build: (input) => ({
    argv: [
      "claude",
      "-p",
      input.prompt,
      "--output-format",
      "stream-json",
      "--verbose",
      "--model",
      input.model,
      "--permission-mode",
      "acceptEdits",
      "--allowedTools",
      "Bash,Read,Edit,Write,Glob,Grep",
    ],
    env: {
      ANTHROPIC_BASE_URL: input.baseUrl,
      ANTHROPIC_API_KEY: input.apiKey,
      CLAUDE_CONFIG_DIR: "/tmp/claude-config",
      ...CLAUDE_CODE_QUIET_ENV,
    },
  }),
  parse(stdout) {
    const { events, errors } = jsonLines(stdout);
    const steps: TranscriptStep[] = [...errors];
    /** tool_use id → tool name and input, to read its result. */
    const calls = new Map<string, { name: string; input: Record<string, unknown> }>();
    for (const e of events) {
      const at = str(e.timestamp);
      const stamp = at ? { at } : {};
      const message = obj(e.message);
      const content = Array.isArray(message.content) ? (message.content as unknown[]).map(obj) : [];
      if (e.type === "assistant" && str(e.error)) {
        // A message Claude Code makes up itself when the model call failed ("API Error: 400 …").
        const text = content.map((b) => str(b.text) ?? "").join("");
        steps.push({ kind: "error", message: text || `model call failed: ${str(e.error)}`, ...stamp });
      } else if (e.type === "assistant") {
        for (const block of content) {
          if (block.type === "text" && str(block.text)) {
            steps.push({ kind: "message", role: "assistant", text: str(block.text) ?? "", ...stamp });
          } else if (block.type === "tool_use") {
            const name = str(block.name) ?? "?";
            const input = obj(block.input);
            calls.set(str(block.id) ?? "", { name, input });
            steps.push({ kind: "tool_call", name, input: summarize(input), ...stamp });
          }
        }
      } else if (e.type === "user") {
        for (const block of content) {
          if (block.type !== "tool_result") continue;
          const call = calls.get(str(block.tool_use_id) ?? "");
          if (!call) continue;
          const output = resultText(block.content);
          const failed = block.is_error === true;
          if (call.name === "Bash") {
            // Claude Code reports no exit code for a command that succeeded; a failed one says "Exit code N".
            const code = /Exit code (\d+)/.exec(output);
            steps.push({
              kind: "command",
              text: str(call.input.command) ?? "",
              exitCode: failed ? (code ? Number(code[1]) : null) : 0,
              output: summarize(output, 2000),
              ...stamp,
            });
          } else if ((call.name === "Edit" || call.name === "Write" || call.name === "MultiEdit") && !failed) {
            steps.push({ kind: "file_edit", path: str(call.input.file_path) ?? "", change: call.name, ...stamp });
          } else if (failed) {
            steps.push({ kind: "error", message: `${call.name}: ${summarize(output)}`, ...stamp });
          }
        }
      } else if (e.type === "result") {
        const usage = obj(e.usage);
        steps.push({
          kind: "usage",
          inputTokens:
            num(usage.input_tokens) + num(usage.cache_read_input_tokens) + num(usage.cache_creation_input_tokens),
          outputTokens: num(usage.output_tokens),
          ...(typeof e.total_cost_usd === "number" ? { costUsd: e.total_cost_usd } : {}),
        });
        // An API failure still says subtype "success", with is_error and terminal_reason "api_error".
        if (e.is_error === true || (str(e.subtype) && e.subtype !== "success")) {
          const reason = str(e.terminal_reason) ?? str(e.subtype) ?? "error";
          steps.push({ kind: "error", message: `${reason}: ${summarize(e.result ?? "")}` });
        }
      }
    }
    return steps;
  },
};

/**
 * Codex CLI: `codex exec --json`. The model endpoint is a custom provider given with `-c` switches
 * (no config.toml needed); CODEX_HOME is the Sandbox's private /tmp (it must exist; Codex writes its
 * state there). Its own sandbox is bypassed (`--dangerously-bypass-approvals-and-sandbox`): ours
 * wraps it, and its bubblewrap refuses helper binaries under /tmp. `--ephemeral` keeps no session;
 * the `-c` switches stop the look-ups of outside hosts (PLATFORM.md). A model name Codex knows gets
 * its apply_patch tool; an unknown one only exec_command.
 */
export const codex: ProgramPreset = {
  name: "codex",
  wire: "openai-responses",
  build: (input) => ({
    argv: [
      "codex",
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--ephemeral",
      "--dangerously-bypass-approvals-and-sandbox",
      ...CODEX_QUIET_CONFIG.flatMap((c) => ["-c", c]),
      "-c",
      `model=${JSON.stringify(input.model)}`,
      "-c",
      'model_provider="rhumbatron"',
      "-c",
      'model_providers.rhumbatron.name="Rhumbatron model endpoint"',
      "-c",
      `model_providers.rhumbatron.base_url=${JSON.stringify(`${input.baseUrl.replace(/\/$/, "")}/v1`)}`,
      "-c",
      'model_providers.rhumbatron.wire_api="responses"',
      "-c",
      'model_providers.rhumbatron.env_key="RHUMBATRON_MODEL_API_KEY"',
      input.prompt,
    ],
    env: { CODEX_HOME: "/tmp", RHUMBATRON_MODEL_API_KEY: input.apiKey },
  }),
  parse(stdout) {
    const { events, errors } = jsonLines(stdout);
    const steps: TranscriptStep[] = [...errors];
    for (const e of events) {
      if (e.type === "item.completed") {
        const item = obj(e.item);
        if (item.type === "agent_message") {
          steps.push({ kind: "message", role: "assistant", text: str(item.text) ?? "" });
        } else if (item.type === "command_execution") {
          steps.push({
            kind: "command",
            text: str(item.command) ?? "",
            exitCode: typeof item.exit_code === "number" ? item.exit_code : null,
            output: summarize(item.aggregated_output ?? "", 2000),
          });
        } else if (item.type === "file_change") {
          for (const c of Array.isArray(item.changes) ? item.changes.map(obj) : []) {
            steps.push({ kind: "file_edit", path: str(c.path) ?? "", change: str(c.kind) ?? "update" });
          }
        } else if (item.type === "mcp_tool_call" || item.type === "web_search") {
          steps.push({
            kind: "tool_call",
            name: str(item.tool) ?? String(item.type),
            input: summarize(item.arguments ?? item.query),
          });
        } else if (item.type === "error") {
          steps.push({ kind: "error", message: str(item.message) ?? "error" });
        }
      } else if (e.type === "turn.completed") {
        const usage = obj(e.usage);
        steps.push({ kind: "usage", inputTokens: num(usage.input_tokens), outputTokens: num(usage.output_tokens) });
      } else if (e.type === "turn.failed") {
        steps.push({ kind: "error", message: str(obj(e.error).message) ?? "turn failed" });
      } else if (e.type === "error") {
        steps.push({ kind: "error", message: str(e.message) ?? "error" });
      }
    }
    return steps;
  },
};

/** A timestamp as ISO text: Gemini CLI gives ISO strings, OpenCode milliseconds since the epoch. */
function stampOf(v: unknown): { at?: string } {
  if (typeof v === "string" && v) return { at: v };
  if (typeof v === "number" && Number.isFinite(v)) return { at: new Date(v).toISOString() };
  return {};
}

/** "Exit Code: 1", "exit code 1", "exited with 1": the exit code a command's output states, if any. */
function statedExitCode(text: string): number | null {
  const m = /exit(?:ed)?(?: with)?(?: code)?:?\s*(\d+)/i.exec(text);
  return m ? Number(m[1]) : null;
}

/**
 * Without these Gemini CLI 0.61.0 also sends usage statistics and telemetry to Google's hosts and
 * checks for updates; the rest makes its non-interactive run use the API key against the endpoint.
 */
export const GEMINI_SETTINGS = {
  security: { auth: { selectedType: "gemini-api-key" } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { disableAutoUpdate: true, disableUpdateNag: true },
} as const;

/**
 * Gemini CLI: `gemini -p <prompt> --output-format stream-json --yolo --model <model>`. Its settings
 * (the API key as its auth method, no statistics, telemetry or update check) are written into the
 * run's private home (GEMINI_CLI_HOME), where it also keeps its session state; the endpoint is
 * GOOGLE_GEMINI_BASE_URL (it refuses plain http but for localhost) and the key GEMINI_API_KEY.
 * `--yolo` approves its tools (our Sandbox is the boundary), GEMINI_CLI_TRUST_WORKSPACE trusts the
 * checkout without a prompt, and GEMINI_CLI_NO_RELAUNCH keeps it from starting itself again in a
 * child Node. An explicit model skips its model router (one more generateContent call).
 */
export const geminiCli: ProgramPreset = {
  name: "gemini-cli",
  wire: "gemini",
  build: (input) => ({
    argv: ["gemini", "-p", input.prompt, "--output-format", "stream-json", "--yolo", "--model", input.model],
    env: {
      GEMINI_CLI_HOME: PRIVATE_HOME,
      GOOGLE_GEMINI_BASE_URL: input.baseUrl,
      GEMINI_API_KEY: input.apiKey,
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      GEMINI_CLI_NO_RELAUNCH: "true",
      NO_COLOR: "1",
    },
    home: { ".gemini/settings.json": `${JSON.stringify(GEMINI_SETTINGS, null, 2)}\n` },
  }),
  parse(stdout) {
    const { events, errors } = jsonLines(stdout);
    const steps: TranscriptStep[] = [...errors];
    const calls = new Map<string, { name: string; input: Record<string, unknown> }>();
    // Its assistant text comes as deltas: consecutive ones make one message.
    let said: { text: string; at?: string } | null = null;
    const flush = () => {
      if (said?.text.trim()) steps.push({ kind: "message", role: "assistant", text: said.text, ...stampOf(said.at) });
      said = null;
    };
    for (const e of events) {
      const stamp = stampOf(e.timestamp);
      if (e.type === "message" && e.role === "assistant") {
        said = said ?? { text: "", ...(stamp.at ? { at: stamp.at } : {}) };
        said.text += str(e.content) ?? "";
        continue;
      }
      flush();
      if (e.type === "tool_use") {
        const name = str(e.tool_name) ?? "?";
        const input = obj(e.parameters);
        calls.set(str(e.tool_id) ?? "", { name, input });
        steps.push({ kind: "tool_call", name, input: summarize(input), ...stamp });
      } else if (e.type === "tool_result") {
        const call = calls.get(str(e.tool_id) ?? "");
        if (!call) continue;
        const failed = e.status === "error";
        const output = str(e.output) ?? "";
        const message = str(obj(e.error).message) ?? output;
        if (call.name === "run_shell_command") {
          // A command that ran reports its exit code in its output only when it was not 0.
          const stated = statedExitCode(`${output}\n${failed ? message : ""}`);
          steps.push({
            kind: "command",
            text: str(call.input.command) ?? "",
            exitCode: stated ?? (failed ? null : 0),
            output: summarize(output || message, 2000),
            ...stamp,
          });
        } else if ((call.name === "replace" || call.name === "write_file") && !failed) {
          steps.push({ kind: "file_edit", path: str(call.input.file_path) ?? "", change: call.name, ...stamp });
        } else if (failed) {
          steps.push({ kind: "error", message: `${call.name}: ${summarize(message)}`, ...stamp });
        }
      } else if (e.type === "error") {
        steps.push({ kind: "error", message: `${str(e.severity) ?? "error"}: ${str(e.message) ?? ""}`, ...stamp });
      } else if (e.type === "result") {
        const stats = obj(e.stats);
        steps.push({ kind: "usage", inputTokens: num(stats.input_tokens), outputTokens: num(stats.output_tokens) });
        if (e.status !== "success") {
          steps.push({ kind: "error", message: `${str(e.status) ?? "error"}: ${summarize(e.error ?? "")}`, ...stamp });
        }
      }
    }
    flush();
    return steps;
  },
};

/**
 * Without these OpenCode 1.18.33 also looks for updates, fetches its models list from models.dev,
 * downloads language servers and installs its default plugins from the npm registry. It still
 * installs its plugin package into its config folder in the background: `npm_config_offline` makes
 * that fail at once instead of waiting on a registry the proxy refuses, and `npm_config_cache`
 * keeps npm's cache out of HOME (the checkout).
 */
export const OPENCODE_QUIET_ENV: Readonly<Record<string, string>> = {
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_DISABLE_SHARE: "1",
  OPENCODE_DISABLE_CLAUDE_CODE: "1",
  OPENCODE_DISABLE_PROJECT_CONFIG: "1",
  npm_config_offline: "true",
  npm_config_cache: "/tmp/opencode/npm",
};

/** OpenCode's configuration for one run: the endpoint as its only provider, every tool allowed. */
export function opencodeConfig(input: Pick<ProgramRunInput, "model" | "baseUrl">): Record<string, unknown> {
  return {
    autoupdate: false,
    share: "disabled",
    provider: {
      rhumbatron: {
        npm: "@ai-sdk/anthropic",
        name: "Rhumbatron model endpoint",
        options: { baseURL: `${input.baseUrl.replace(/\/$/, "")}/v1`, apiKey: "{env:RHUMBATRON_MODEL_API_KEY}" },
        models: { [input.model]: { name: input.model, tool_call: true } },
      },
    },
    model: `rhumbatron/${input.model}`,
    // Its title agent would spend a model call naming the session nobody sees.
    agent: { title: { disable: true } },
    permission: { edit: "allow", bash: "allow", webfetch: "deny" },
  };
}

/**
 * OpenCode: `opencode run --format json <prompt>`. Its configuration is given whole in
 * OPENCODE_CONFIG_CONTENT (the endpoint as an Anthropic-format provider, `<endpoint>/v1`, its key
 * read from RHUMBATRON_MODEL_API_KEY; the project's own OpenCode configuration is not read); its
 * state (XDG folders: session database, snapshots, logs) goes to the Sandbox's private /tmp. It
 * reads a piped stdin to its end before it starts: the runner gives it an empty, closed one.
 */
export const opencode: ProgramPreset = {
  name: "opencode",
  wire: "anthropic-messages",
  build: (input) => ({
    argv: ["opencode", "run", "--format", "json", input.prompt],
    env: {
      OPENCODE_CONFIG_CONTENT: JSON.stringify(opencodeConfig(input)),
      RHUMBATRON_MODEL_API_KEY: input.apiKey,
      XDG_CONFIG_HOME: "/tmp/opencode/config",
      XDG_DATA_HOME: "/tmp/opencode/data",
      XDG_CACHE_HOME: "/tmp/opencode/cache",
      XDG_STATE_HOME: "/tmp/opencode/state",
      ...OPENCODE_QUIET_ENV,
    },
  }),
  parse(stdout) {
    const { events, errors } = jsonLines(stdout);
    const steps: TranscriptStep[] = [...errors];
    for (const e of events) {
      const stamp = stampOf(e.timestamp);
      const part = obj(e.part);
      if (e.type === "text" && str(part.text)?.trim()) {
        steps.push({ kind: "message", role: "assistant", text: str(part.text) ?? "", ...stamp });
      } else if (e.type === "tool_use") {
        const name = str(part.tool) ?? "?";
        const state = obj(part.state);
        const input = obj(state.input);
        const failed = state.status === "error";
        const output = str(state.output) ?? str(state.error) ?? "";
        steps.push({ kind: "tool_call", name, input: summarize(input), ...stamp });
        if (name === "bash") {
          const meta = obj(state.metadata);
          const exit = typeof meta.exit === "number" ? meta.exit : statedExitCode(failed ? output : "");
          steps.push({
            kind: "command",
            text: str(input.command) ?? "",
            exitCode: exit ?? (failed ? null : 0),
            output: summarize(str(meta.output) ?? output, 2000),
            ...stamp,
          });
        } else if ((name === "edit" || name === "write" || name === "patch") && !failed) {
          steps.push({ kind: "file_edit", path: str(input.filePath) ?? "", change: name, ...stamp });
        } else if (failed) {
          steps.push({ kind: "error", message: `${name}: ${summarize(output)}`, ...stamp });
        }
      } else if (e.type === "step_finish") {
        const tokens = obj(part.tokens);
        const cache = obj(tokens.cache);
        steps.push({
          kind: "usage",
          inputTokens: num(tokens.input) + num(cache.read) + num(cache.write),
          outputTokens: num(tokens.output) + num(tokens.reasoning),
          ...(typeof part.cost === "number" ? { costUsd: part.cost } : {}),
        });
      } else if (e.type === "error") {
        const err = obj(e.error);
        const message = str(obj(err.data).message) ?? str(err.message) ?? str(err.name) ?? "error";
        steps.push({ kind: "error", message, ...stamp });
      }
    }
    return steps;
  },
};

export const PRESETS: Record<AgentProgramName, ProgramPreset> = {
  "claude-code": claudeCode,
  codex,
  "gemini-cli": geminiCli,
  opencode,
};
