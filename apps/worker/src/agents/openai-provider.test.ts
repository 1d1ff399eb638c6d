import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AgentTask,
  type AgentTools,
  type CommandResult,
  DEFAULT_COMMAND_ALLOWLIST,
  parseSettings,
  type SandboxCommand,
  scriptedProvider,
} from "@rhumbatron/core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeModel, finishReply, say, startFakeModel, toolReply } from "./fake-model.ts";
import { type OpenAiAgentOptions, openAiAgentProvider } from "./openai-provider.ts";
import { agentProviderFromSettings } from "./provider-from-settings.ts";
import { workspaceTools } from "./toolbox.ts";

// The model endpoint is the local fake (fake-model.ts): canned replies, every request recorded.
let model: FakeModel;
beforeAll(async () => {
  model = await startFakeModel();
});
afterAll(() => model.close());
const reply = toolReply;
const finish = finishReply;

// The real toolbox over a temp folder; the Sandbox runs nothing and answers with a fixed result.
let dir: string;
let ran: SandboxCommand[];
let tools: AgentTools;
const commandResult: CommandResult = {
  exitCode: 0,
  signal: null,
  stdout: "1 passed",
  stderr: "",
  timedOut: false,
  truncated: false,
  durationMs: 12,
};
beforeEach(() => {
  model.reset();
  ran = [];
  dir = mkdtempSync(join(tmpdir(), "rh-openai-agent-"));
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src/app.ts"), "export const x = 1;\n");
  const ws = {
    path: dir,
    run: async (cmd: SandboxCommand) => {
      ran.push(cmd);
      return commandResult;
    },
    remove: async () => {},
  };
  // The folder's file index lists what it holds (list_files answers from the index, not the folder).
  tools = workspaceTools(ws, {
    allowlist: [...DEFAULT_COMMAND_ALLOWLIST],
    commandTimeoutMs: 1000,
    listing: { paths: ["src/app.ts"] },
  });
});
afterEach(() => {
  model.reset();
  rmSync(dir, { recursive: true, force: true });
});

const task: AgentTask = {
  taskId: "tsk_1",
  key: "bump-x",
  title: "Bump x to 2",
  changeTitle: "Release 2",
  changeDescription: "Everything that says 1 should say 2.",
  intents: { paths: ["src/app.ts"], prefixes: ["src/lib/"] },
  editPlan: null,
};
const provider = (over: Partial<OpenAiAgentOptions> = {}) =>
  openAiAgentProvider({
    baseUrl: model.baseUrl,
    model: "coder-test",
    maxSteps: 10,
    maxTokens: 10_000,
    timeoutMs: 2000,
    ...over,
  });
const lastMessages = (i: number, n: number) => model.recorded[i]?.body.messages.slice(-n);
const toolMessages = (i: number) => model.recorded[i]?.body.messages.filter((m) => m.role === "tool") ?? [];

describe("openAiAgentProvider", () => {
  it("runs list -> read -> write -> finish, sending each result back under its tool_call_id", async () => {
    model.script = [
      reply([["call_1", "list_files", {}]]),
      reply([["call_2", "read_file", { path: "src/app.ts" }]]),
      reply([["call_3", "write_file", { path: "src/app.ts", content: "export const x = 2;\n" }]]),
      finish("call_4", "bumped x to 2"),
    ];
    const outcome = await provider().run(task, tools);

    expect(outcome).toEqual({ status: "completed", summary: "bumped x to 2", steps: 4 });
    expect(readFileSync(join(dir, "src/app.ts"), "utf8")).toBe("export const x = 2;\n");
    expect(model.recorded).toHaveLength(4);

    const first = model.recorded[0];
    expect(first?.url).toBe("/v1/chat/completions");
    expect(first?.headers.authorization).toBeUndefined();
    expect(first?.body).toMatchObject({ model: "coder-test", tool_choice: "auto", max_tokens: 4096 });
    expect(first?.body.tools?.map((t) => t.function.name)).toEqual([
      "read_file",
      "write_file",
      "delete_file",
      "list_files",
      "run_command",
      "finish",
    ]);
    const write = first?.body.tools?.find((t) => t.function.name === "write_file");
    expect(write).toMatchObject({ type: "function", function: { parameters: { type: "object" } } });
    expect(write?.function.parameters.required).toEqual(["path", "content"]);
    const system = first?.body.messages[0];
    expect(system?.role).toBe("system");
    for (const part of ["Bump x to 2", "Release 2", "Everything that says 1", "src/app.ts", "src/lib/", "finish"]) {
      expect(system?.content).toContain(part);
    }

    // Each later request echoes the assistant's tool call, then its result.
    expect(lastMessages(1, 2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "list_files", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "src/app.ts" },
    ]);
    expect(lastMessages(2, 1)).toEqual([{ role: "tool", tool_call_id: "call_2", content: "export const x = 1;\n" }]);
    expect(lastMessages(3, 1)).toEqual([{ role: "tool", tool_call_id: "call_3", content: "ok" }]);
  });

  it("tells the model about a wake that reached it between two steps, once, before its next step", async () => {
    model.script = [reply([["call_1", "list_files", {}]]), finish("call_2")];
    const notices = [
      {
        reason: "exact_overlap",
        paths: ["src/app.ts"],
        note: "continued: task other holds src/app.ts, which this Task also touches",
      },
    ];
    // The wake arrives while the first step runs (the run's watcher puts it in the inbox).
    let steps = 0;
    const inbox = { take: () => (steps++ === 1 ? notices.splice(0) : []) };
    expect(await provider().run(task, tools, undefined, inbox)).toMatchObject({ status: "completed" });
    expect(model.recorded[0]?.body.messages.map((m) => m.role)).toEqual(["system", "user"]);
    const told = lastMessages(1, 1)?.[0];
    expect(told?.role).toBe("user");
    expect(told?.content).toContain("task other holds src/app.ts");
    expect(told?.content).toContain("(paths: src/app.ts)");
    expect(model.recorded[1]?.body.messages.filter((m) => m.content?.includes("While you worked"))).toHaveLength(1);
  });

  it("reports refused paths and commands to the model as errors and goes on", async () => {
    model.script = [
      reply([
        ["call_1", "read_file", { path: "../etc/passwd" }],
        ["call_2", "write_file", { path: "/etc/passwd", content: "x" }],
        ["call_3", "run_command", { argv: ["bash", "-c", "id"] }],
        ["call_4", "run_command", { argv: ["npm", "test"] }],
      ]),
      finish("call_5", "could not", "failed"),
    ];
    const outcome = await provider().run(task, tools);

    expect(outcome).toEqual({ status: "failed", summary: "could not", steps: 2 });
    const results = toolMessages(1);
    expect(results.map((m) => m.tool_call_id)).toEqual(["call_1", "call_2", "call_3", "call_4"]);
    expect(results[0]?.content).toMatch(/^error: refused path "\.\.\/etc\/passwd": outside the run directory/);
    expect(results[1]?.content).toMatch(/^error: refused path "\/etc\/passwd": absolute paths are not allowed/);
    expect(results[2]?.content).toMatch(/^error: command "bash" is not on the allowlist/);
    expect(JSON.parse(results[3]?.content ?? "")).toEqual({
      exitCode: 0,
      timedOut: false,
      stdout: "1 passed",
      stderr: "",
    });
    expect(ran.map((c) => c.argv)).toEqual([["npm", "test"]]);
  });

  it("answers bad arguments with an error message instead of running the tool", async () => {
    model.script = [
      reply([
        ["call_1", "write_file", '{"path": "a.txt", "content": '],
        ["call_2", "write_file", { path: "a.txt" }],
        ["call_3", "edit_file", { path: "a.txt" }],
      ]),
      finish("call_4"),
    ];
    const outcome = await provider().run(task, tools);

    expect(outcome.status).toBe("completed");
    const [badJson, badShape, unknown] = toolMessages(1).map((m) => m.content);
    expect(badJson).toMatch(/^error: arguments are not valid JSON: \{"path": "a.txt"/);
    expect(badShape).toMatch(/^error: invalid arguments for write_file: content/);
    expect(unknown).toMatch(/^error: unknown tool "edit_file"; use one of read_file, write_file/);
    expect(await tools.listFiles()).toEqual(["src/app.ts"]);
  });

  it("fails when maxSteps model calls pass without finish", async () => {
    model.script = [1, 2, 3].map((i) => reply([[`call_${i}`, "list_files", {}]]));
    const outcome = await provider({ maxSteps: 3 }).run(task, tools);
    expect(outcome).toEqual({ status: "failed", summary: "stopped after 3 model calls without finish", steps: 3 });
    expect(model.recorded).toHaveLength(3);
  });

  it("fails once the token budget is passed, without acting on the reply that passed it", async () => {
    model.script = [
      reply([["call_1", "list_files", {}]], 100),
      reply([["call_2", "list_files", {}]], 100),
      reply([["call_3", "write_file", { path: "late.txt", content: "x" }]], 100),
    ];
    const outcome = await provider({ maxTokens: 250 }).run(task, tools);
    expect(outcome).toEqual({
      status: "failed",
      summary: "token budget of 250 passed (300 used after 3 model calls)",
      steps: 3,
    });
    // max_tokens never asks for more than is left of the budget.
    expect(model.recorded.map((r) => r.body.max_tokens)).toEqual([250, 150, 50]);
    expect(await tools.listFiles()).toEqual(["src/app.ts"]);
  });

  it("fails after two replies in a row without a tool call, nudging after the first", async () => {
    model.script = [say("I will now edit the file."), say("Done, I think.")];
    const outcome = await provider().run(task, tools);
    expect(outcome).toEqual({
      status: "failed",
      summary: "the model answered twice in a row without a tool call or finish (finish_reason stop)",
      steps: 2,
    });
    expect(lastMessages(1, 2)).toEqual([
      { role: "assistant", content: "I will now edit the file." },
      { role: "user", content: "Continue by calling a tool, or call finish if the Task is done." },
    ]);
  });

  it("retries once after a server error", async () => {
    model.script = [{ status: 500, body: "overloaded" }, finish("call_1")];
    const outcome = await provider().run(task, tools);
    expect(outcome).toEqual({ status: "completed", summary: "done", steps: 1 });
    expect(model.recorded).toHaveLength(2);
    expect(model.recorded[1]?.body).toEqual(model.recorded[0]?.body);
  });

  it("fails on malformed JSON twice, and does not retry a client error", async () => {
    model.script = [
      { status: 200, body: "<html>gateway</html>" },
      { status: 200, body: '{"choices": []}' },
    ];
    expect(await provider().run(task, tools)).toEqual({
      status: "failed",
      summary: 'model call 1: response is not a chat completion: {"choices": []} (after one retry)',
      steps: 1,
    });

    model.recorded = [];
    model.script = [{ status: 401, body: '{"error":"bad key"}' }, finish("call_1")];
    const outcome = await provider().run(task, tools);
    expect(outcome.status).toBe("failed");
    expect(outcome.summary).toBe(`model call 1: HTTP 401 from ${model.baseUrl}/chat/completions: {"error":"bad key"}`);
    expect(model.recorded).toHaveLength(1);
  });

  it("fails with a clear summary when the server does not answer in time", async () => {
    model.script = ["hang", "hang"];
    const outcome = await provider({ timeoutMs: 150 }).run(task, tools);
    expect(outcome).toEqual({
      status: "failed",
      summary: `model call 1: no answer within 150 ms from ${model.baseUrl}/chat/completions (after one retry)`,
      steps: 1,
    });
    expect(model.recorded).toHaveLength(2);
  });

  it("stops when the caller cancels", async () => {
    model.script = ["hang", finish("call_1")];
    const controller = new AbortController();
    const running = provider().run(task, tools, controller.signal);
    setTimeout(() => controller.abort(), 50);
    expect(await running).toEqual({ status: "failed", summary: "model call 1: cancelled by the caller", steps: 1 });
    expect(model.recorded).toHaveLength(1);
  });

  it("sends the API key as a bearer token on every call", async () => {
    model.script = [reply([["call_1", "list_files", {}]]), finish("call_2")];
    await provider({ apiKey: "sk-agent" }).run(task, tools);
    expect(model.recorded.map((r) => r.headers.authorization)).toEqual(["Bearer sk-agent", "Bearer sk-agent"]);
  });
});

describe("agentProviderFromSettings", () => {
  it("is the scripted provider when no URL is set", () => {
    expect(agentProviderFromSettings(parseSettings({}))).toBe(scriptedProvider);
  });

  it("is the OpenAI-compatible provider with the configured model, key and limits", async () => {
    const settings = parseSettings({
      AGENT_MODEL_URL: model.baseUrl,
      AGENT_MODEL_MODEL: "coder-from-env",
      AGENT_MODEL_API_KEY: "sk-env",
      AGENT_MODEL_MAX_STEPS: "2",
      AGENT_MODEL_MAX_TOKENS: "1000",
    });
    const p = agentProviderFromSettings(settings);
    expect(p.name).toBe("openai-compatible");

    model.script = [1, 2].map((i) => reply([[`call_${i}`, "list_files", {}]]));
    expect(await p.run(task, tools)).toMatchObject({ status: "failed", steps: 2 });
    expect(model.recorded[0]?.body).toMatchObject({ model: "coder-from-env", max_tokens: 1000 });
    expect(model.recorded[0]?.headers.authorization).toBe("Bearer sk-env");
  });

  it("refuses a URL without a model in hand-built settings", () => {
    const settings = { ...parseSettings({}), AGENT_MODEL_URL: model.baseUrl };
    expect(() => agentProviderFromSettings(settings)).toThrow(expect.objectContaining({ code: "INVALID_CONFIG" }));
  });
});
