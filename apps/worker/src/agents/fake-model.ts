import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Test support only: a local chat-completions server (the OpenAI wire format) that replays a
 * recorded conversation. Each request gets the next canned reply (a 500 once the script has run
 * out), and every request, headers and body, is kept for the assertions. The model endpoint is
 * the one thing outside this machine, so this is the one thing the tests stand in for.
 */
export type Canned = { status: number; body: string } | "hang";

export interface ChatMessage {
  role: string;
  content: string | null;
  tool_call_id?: string;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: { type: string; function: { name: string; parameters: { type: string; required?: string[] } } }[];
  tool_choice?: string;
  max_tokens?: number;
  [field: string]: unknown;
}

export interface RecordedRequest {
  url: string | undefined;
  headers: IncomingMessage["headers"];
  body: ChatRequest;
}

export interface FakeModel {
  /** The API base, like `http://127.0.0.1:<port>/v1`. */
  baseUrl: string;
  /** The replies still to give, in order. */
  script: Canned[];
  recorded: RecordedRequest[];
  /** Empties the script and the record, and drops requests left hanging. */
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeModel(): Promise<FakeModel> {
  const hanging: ServerResponse[] = [];
  const model = { script: [] as Canned[], recorded: [] as RecordedRequest[] };
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => {
      raw += c;
    });
    req.on("end", () => {
      model.recorded.push({ url: req.url, headers: req.headers, body: JSON.parse(raw) });
      const next = model.script.shift() ?? { status: 500, body: "the recorded conversation has ended" };
      if (next === "hang") hanging.push(res);
      else res.writeHead(next.status, { "content-type": "application/json" }).end(next.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(model, {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    reset() {
      model.script = [];
      model.recorded = [];
      for (const res of hanging.splice(0)) res.destroy();
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}

// Wire format of a reply: choices[0].message.tool_calls[] with JSON-string arguments, plus usage.
export type Call = [id: string, name: string, args: Record<string, unknown> | string];

export const toolReply = (calls: Call[], totalTokens = 100): Canned => ({
  status: 200,
  body: JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    model: "coder-test",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: null,
          tool_calls: calls.map(([id, name, args]) => ({
            id,
            type: "function",
            function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
          })),
        },
        finish_reason: "tool_calls",
      },
    ],
    usage: { prompt_tokens: totalTokens - 20, completion_tokens: 20, total_tokens: totalTokens },
  }),
});

/** A reply of plain text (what a review's answer is). */
export const say = (content: string): Canned => ({
  status: 200,
  body: JSON.stringify({
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { total_tokens: 50 },
  }),
});

export const finishReply = (id: string, summary = "done", status = "completed") =>
  toolReply([[id, "finish", { summary, status }]]);
