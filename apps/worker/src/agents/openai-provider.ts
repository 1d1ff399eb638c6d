import type { AgentNotice, AgentOutcome, AgentProvider, AgentTask, AgentTools, ContextPacket } from "@rhumbatron/core";
import { z } from "zod";

export interface OpenAiAgentOptions {
  /** API base such as http://localhost:8080/v1; `/chat/completions` is appended. */
  baseUrl: string;
  model: string;
  apiKey?: string | undefined;
  /** Model calls per run; a run that has not called `finish` by then fails. */
  maxSteps: number;
  /** Budget of `usage.total_tokens`, summed over the run's model calls. */
  maxTokens: number;
  /** Per model call (each attempt). */
  timeoutMs: number;
  /** Injected in tests; the global fetch otherwise. */
  fetch?: typeof fetch;
}

// Per-reply cap sent as `max_tokens` (never above what is left of the budget): enough for one file,
// and within the output limit of common models, which reject larger values with HTTP 400.
const MAX_REPLY_TOKENS = 4096;
// Caps on tool results sent back, so one large file or log cannot eat the token budget.
const MAX_RESULT_CHARS = 50_000;
const MAX_OUTPUT_CHARS = 4_000;

type Finish = Omit<AgentOutcome, "steps">;
interface Tool {
  name: string;
  description: string;
  schema: z.ZodType;
  /** Validates the arguments, then runs; returns the text sent back to the model, or the outcome of `finish`. */
  invoke(args: unknown, tools: AgentTools): Promise<string | Finish>;
}

function tool<S extends z.ZodType>(
  name: string,
  description: string,
  schema: S,
  run: (args: z.infer<S>, tools: AgentTools) => Promise<string | Finish>,
): Tool {
  return {
    name,
    description,
    schema,
    async invoke(args, tools) {
      const parsed = schema.safeParse(args);
      if (parsed.success) return run(parsed.data, tools);
      const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(arguments)"} ${i.message}`);
      return `error: invalid arguments for ${name}: ${issues.join("; ")}`;
    },
  };
}

const path = z.string().min(1);
const cap = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}\n[cut at ${n} of ${s.length} characters]` : s);

/** The tools offered to the model. Path and command refusals come from the AgentTools themselves. */
const TOOLS: Tool[] = [
  tool("read_file", "Read a UTF-8 file; path is relative to the project root.", z.object({ path }), async (a, t) =>
    cap(await t.readFile(a.path), MAX_RESULT_CHARS),
  ),
  tool(
    "write_file",
    "Create or overwrite a file with its full new content.",
    z.object({ path, content: z.string() }),
    async (a, t) => {
      await t.writeFile(a.path, a.content);
      return "ok";
    },
  ),
  tool("delete_file", "Delete a file.", z.object({ path }), async (a, t) => {
    await t.deleteFile(a.path);
    return "ok";
  }),
  tool(
    "list_files",
    "List every file of the project (relative paths, from its file index).",
    z.object({}),
    async (_, t) => cap((await t.listFiles()).join("\n"), MAX_RESULT_CHARS),
  ),
  tool(
    "run_command",
    "Run an allowlisted command: argv[0] is a bare executable name, no shell. Returns exit code and output tails.",
    z.object({ argv: z.array(z.string()).min(1) }),
    async (a, t) => {
      const r = await t.runCommand(a.argv);
      const tail = (s: string) => s.slice(-MAX_OUTPUT_CHARS);
      return JSON.stringify({
        exitCode: r.exitCode,
        timedOut: r.timedOut,
        stdout: tail(r.stdout),
        stderr: tail(r.stderr),
      });
    },
  ),
  tool(
    "finish",
    "Call once at the end: status completed if the Task is done, failed if it cannot be done.",
    z.object({ summary: z.string().min(1), status: z.enum(["completed", "failed"]) }),
    async (a) => ({ status: a.status, summary: a.summary }),
  ),
];

// Wire format: `tools: [{ type: "function", function: { name, description, parameters: <JSON Schema> } }]`.
const toolDefinitions = TOOLS.map(({ name, description, schema }) => {
  const { $schema: _, ...parameters } = z.toJSONSchema(schema);
  return { type: "function", function: { name, description, parameters } };
});

// Wire format of a reply: only the fields the loop reads; servers add many others.
const toolCall = z.object({
  id: z.string().optional(), // a few local servers omit it; one is made up so results can name their call
  function: z.object({ name: z.string(), arguments: z.string().optional() }),
});
const completion = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z.array(toolCall).nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z.object({ total_tokens: z.number() }).nullish(),
});
type Completion = z.infer<typeof completion>;

interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** Chat messages as sent: assistant turns echo their tool_calls; each result names its tool_call_id. */
type Message =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export function systemPrompt(task: AgentTask): string {
  const list = (xs: string[]) => (xs.length ? xs.join(", ") : "(none)");
  return [
    "You are a coding agent working on one Task of a Change, inside the project's working copy.",
    "Use the tools to inspect and edit files; paths are relative to the project root.",
    `Change: ${task.changeTitle}`,
    `Change description: ${task.changeDescription || "(none)"}`,
    `Task: ${task.title}`,
    `Paths this Task intends to touch: ${list(task.intents.paths)}`,
    `Path prefixes this Task intends to touch: ${list(task.intents.prefixes)}`,
    "Stay within those paths where you can. When the Task is done (or cannot be done), call finish with a short summary.",
    ...(task.context ? ["", ...packetLines(task.context)] : []),
  ].join("\n");
}

/**
 * The run's Context Packet as the model reads it: each item's ID, path, size, blob and why it was
 * picked (paths JSON-quoted so none can break a line). The items are not inlined: the Agent opens
 * the ones it needs with read_file, so the packet costs a few lines whatever the files weigh.
 */
export function packetLines(packet: ContextPacket): string[] {
  return [
    `Context Packet ${packet.id}: files picked for this Task from the project's file index${packet.tree ? ` (tree ${packet.tree})` : ""}.`,
    "Refer to them by item ID; read one with read_file before you edit it, and list_files lists every file.",
    ...packet.items.map((i) => `- ${i.id} ${JSON.stringify(i.path)} (${i.size} bytes, blob ${i.blob}): ${i.why}`),
    ...(packet.items.length === 0 ? ["(no file of the index matched the Task)"] : []),
    ...(packet.omitted.length
      ? [`Also relevant, over the packet's budget: ${packet.omitted.map((o) => JSON.stringify(o.path)).join(", ")}`]
      : []),
    ...(packet.note ? [`Note: ${packet.note}`] : []),
  ];
}

/** Wakes that reached the Agent since its last step, as one message it reads before its next. */
export function wakeMessage(notices: readonly AgentNotice[]): string {
  return [
    "While you worked, other Tasks touched files this Task touches:",
    ...notices.map((n) => `- ${n.note} (paths: ${n.paths.join(", ") || "(none)"})`),
    "Re-read those files before you edit them again, keep your changes to what this Task needs, then go on.",
  ].join("\n");
}

/**
 * An agent provider behind any OpenAI-compatible chat-completions API with tool calling. The loop is
 * bounded by steps, tokens and per-call timeouts; every way it ends is an outcome, never a throw.
 */
export function openAiAgentProvider(options: OpenAiAgentOptions): AgentProvider {
  const endpoint = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  return {
    name: "openai-compatible",
    async run(task, tools, signal, inbox) {
      const messages: Message[] = [
        { role: "system", content: systemPrompt(task) },
        { role: "user", content: `Do the Task "${task.title}", then call finish.` },
      ];
      let steps = 0;
      let tokens = 0;
      let idleReplies = 0;
      const failed = (summary: string): AgentOutcome => ({ status: "failed", summary, steps });
      while (steps < options.maxSteps) {
        if (signal?.aborted) return failed("cancelled by the caller");
        const notices = inbox?.take() ?? [];
        if (notices.length) messages.push({ role: "user", content: wakeMessage(notices) });
        steps++;
        // Wire format of the request; `max_tokens` caps this reply, never above what is left of the budget.
        const body = JSON.stringify({
          model: options.model,
          messages,
          tools: toolDefinitions,
          tool_choice: "auto",
          max_tokens: Math.max(1, Math.min(MAX_REPLY_TOKENS, options.maxTokens - tokens)),
        });
        const reply = await callWithRetry(options, endpoint, body, signal);
        if (typeof reply === "string") return failed(`model call ${steps}: ${reply}`);
        tokens += reply.usage?.total_tokens ?? 0;
        // An over-budget reply is not acted on: the budget is a hard cap on what a run may do.
        if (tokens > options.maxTokens) {
          return failed(`token budget of ${options.maxTokens} passed (${tokens} used after ${steps} model calls)`);
        }
        const choice = reply.choices[0];
        const calls: ToolCall[] = (choice?.message.tool_calls ?? []).map((c, i) => ({
          id: c.id ?? `call_${steps}_${i}`,
          type: "function",
          function: { name: c.function.name, arguments: c.function.arguments ?? "" },
        }));
        messages.push({
          role: "assistant",
          content: choice?.message.content ?? null,
          ...(calls.length ? { tool_calls: calls } : {}),
        });
        if (calls.length === 0) {
          // A reply of plain text: nudge once, stop on the second in a row.
          const why = `finish_reason ${choice?.finish_reason ?? "none"}`;
          if (++idleReplies >= 2)
            return failed(`the model answered twice in a row without a tool call or finish (${why})`);
          messages.push({ role: "user", content: "Continue by calling a tool, or call finish if the Task is done." });
          continue;
        }
        idleReplies = 0;
        for (const call of calls) {
          const result = await runTool(call.function.name, call.function.arguments, tools);
          if (typeof result !== "string") return { ...result, steps };
          messages.push({ role: "tool", tool_call_id: call.id, content: result });
        }
      }
      return failed(`stopped after ${options.maxSteps} model calls without finish`);
    },
  };
}

/** Runs one tool call. Bad arguments and tool errors become text for the model: it may correct itself. */
async function runTool(name: string, rawArgs: string, tools: AgentTools): Promise<string | Finish> {
  const found = TOOLS.find((t) => t.name === name);
  if (!found) return `error: unknown tool ${JSON.stringify(name)}; use one of ${TOOLS.map((t) => t.name).join(", ")}`;
  let args: unknown;
  try {
    // `arguments` is a JSON string on the wire; some servers send "" for a tool without parameters.
    args = JSON.parse(rawArgs.trim() ? rawArgs : "{}");
  } catch {
    return `error: arguments are not valid JSON: ${rawArgs.slice(0, 200)}`;
  }
  try {
    return await found.invoke(args, tools);
  } catch (err) {
    // Refused paths and commands (DomainError FORBIDDEN), missing files, …
    return `error: ${err instanceof Error ? err.message : String(err)}`;
  }
}

type CallResult = { ok: true; reply: Completion } | { ok: false; reason: string; retry: boolean };
/** What one call needs of the options. */
type Endpoint = Pick<OpenAiAgentOptions, "apiKey" | "timeoutMs" | "fetch">;

/**
 * One chat-completions request to `baseUrl` (retried once when a second attempt could go
 * differently), for other users of the same model endpoint (conflict reviews). Never throws: a
 * string says why there is no reply.
 */
export function chatCompletion(
  options: Endpoint & Pick<OpenAiAgentOptions, "baseUrl">,
  body: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Completion | string> {
  const endpoint = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  return callWithRetry(options, endpoint, JSON.stringify(body), signal);
}

/** One model call, retried once when a second attempt could go differently; a string says why it failed. */
async function callWithRetry(
  options: Endpoint,
  endpoint: string,
  body: string,
  signal: AbortSignal | undefined,
): Promise<Completion | string> {
  let r = await callOnce(options, endpoint, body, signal);
  if (!r.ok && r.retry) {
    r = await callOnce(options, endpoint, body, signal);
    if (!r.ok) return `${r.reason} (after one retry)`;
  }
  return r.ok ? r.reply : r.reason;
}

async function callOnce(
  options: Endpoint,
  endpoint: string,
  body: string,
  signal: AbortSignal | undefined,
): Promise<CallResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  try {
    const res = await (options.fetch ?? fetch)(endpoint, { method: "POST", headers, body, signal: combined });
    const text = await res.text();
    if (!res.ok) {
      // Other 4xx answers (bad key, context too long, …) would only repeat.
      const retry = res.status >= 500 || res.status === 408 || res.status === 429;
      return { ok: false, reason: `HTTP ${res.status} from ${endpoint}: ${text.slice(0, 200)}`, retry };
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { ok: false, reason: `response body is not JSON: ${text.slice(0, 80)}`, retry: true };
    }
    const parsed = completion.safeParse(json);
    if (parsed.success) return { ok: true, reply: parsed.data };
    return { ok: false, reason: `response is not a chat completion: ${text.slice(0, 120)}`, retry: true };
  } catch (err) {
    // Aborts surface from fetch or from reading the body, whichever was in progress.
    if (timeout.aborted)
      return { ok: false, reason: `no answer within ${options.timeoutMs} ms from ${endpoint}`, retry: true };
    if (signal?.aborted) return { ok: false, reason: "cancelled by the caller", retry: false };
    return { ok: false, reason: `request to ${endpoint} failed: ${describeError(err)}`, retry: true };
  }
}

/** fetch reports network failures as "fetch failed" with the useful part (ECONNREFUSED, …) in `cause`. */
function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = cause?.code ?? cause?.message;
  return detail ? `${err.message} (${String(detail)})` : err.message;
}
