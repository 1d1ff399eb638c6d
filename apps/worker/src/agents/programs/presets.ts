import type { AgentProgramName } from "./install.ts";
import { num, obj, type ProgramPreset, resultText, str } from "./preset-kit.ts";
import { geminiCli, opencode } from "./presets-gemini-opencode.ts";
import { jsonLines, summarize, type TranscriptStep } from "./transcript.ts";

export { PRIVATE_HOME, type ProgramPreset, type ProgramRun, type ProgramRunInput } from "./preset-kit.ts";
export { GEMINI_SETTINGS, geminiCli, OPENCODE_QUIET_ENV, opencode, opencodeConfig } from "./presets-gemini-opencode.ts";

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

export const PRESETS: Record<AgentProgramName, ProgramPreset> = {
  "claude-code": claudeCode,
  codex,
  "gemini-cli": geminiCli,
  opencode,
};
