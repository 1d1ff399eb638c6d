import {
  num,
  obj,
  PRIVATE_HOME,
  type ProgramPreset,
  type ProgramRunInput,
  stampOf,
  statedExitCode,
  str,
} from "./preset-kit.ts";
import { jsonLines, summarize, type TranscriptStep } from "./transcript.ts";

// The presets of Gemini CLI and opencode (presets.ts holds all four).

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
