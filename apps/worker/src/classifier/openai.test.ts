import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { classifierPrompt, type OverlapQuestion, parseSettings } from "@rhumbatron/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { abstainClassifier, classifierFromSettings, openAiCompatibleClassifier } from "./index.ts";

/** A local stand-in for a chat-completions API: records each request, answers with `respond`. */
interface Recorded {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}
let recorded: Recorded[] = [];
let respond: (res: ServerResponse) => void;
let server: Server;
let baseUrl: string;

const completion = (content: string) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "clef-flash",
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: { prompt_tokens: 120, completion_tokens: 20, total_tokens: 140 },
});
const sendJson = (status: number, body: unknown) => (res: ServerResponse) => {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
};

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => {
      raw += c;
    });
    req.on("end", () => {
      recorded.push({ method: req.method, url: req.url, headers: req.headers, body: JSON.parse(raw) });
      respond(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  recorded = [];
});

const question: OverlapQuestion = {
  changeId: "chg_1",
  eventType: "changeset.proposed",
  eventPaths: ["src/api/users.ts"],
  agent: { agentId: "agt_7", taskId: "tsk_3", paths: [], prefixes: ["src/"] },
  overlaps: [{ eventPath: "src/api/users.ts", agentPath: "src/" }],
};
const classifier = (over: { apiKey?: string; timeoutMs?: number; baseUrl?: string } = {}) =>
  openAiCompatibleClassifier({ baseUrl, model: "clef-flash", timeoutMs: 2000, ...over });

describe("openAiCompatibleClassifier", () => {
  it("sends the chat-completions request and reads a skip", async () => {
    respond = sendJson(200, completion('{"decision":"skip","probability":0.91,"reason":"unrelated module"}'));
    const verdict = await classifier({ apiKey: "sk-test", baseUrl: `${baseUrl}/` }).classify(question);
    expect(verdict).toEqual({ decision: "skip", probability: 0.91, model: "clef-flash", reason: "unrelated module" });

    expect(recorded).toHaveLength(1);
    const [req] = recorded;
    expect(req?.method).toBe("POST");
    expect(req?.url).toBe("/v1/chat/completions");
    expect(req?.headers.authorization).toBe("Bearer sk-test");
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.body).toEqual({
      model: "clef-flash",
      messages: classifierPrompt(question),
      temperature: 0,
      response_format: { type: "json_object" },
    });
  });

  it("reads a wake, and sends no Authorization header without a key", async () => {
    respond = sendJson(200, completion('```json\n{"decision":"wake","probability":0.8,"reason":"same file"}\n```'));
    const verdict = await classifier().classify(question);
    expect(verdict).toMatchObject({ decision: "wake", probability: 0.8 });
    expect(recorded[0]?.headers.authorization).toBeUndefined();
  });

  it("abstains when the server answers after the timeout", async () => {
    respond = (res) => {
      setTimeout(() => sendJson(200, completion('{"decision":"skip","probability":1,"reason":"late"}'))(res), 1000);
    };
    const started = performance.now();
    const verdict = await classifier({ timeoutMs: 200 }).classify(question);
    expect(verdict).toEqual({
      decision: "abstain",
      probability: 0,
      model: "clef-flash",
      reason: "no answer within 200 ms",
    });
    expect(performance.now() - started).toBeLessThan(900);
  });

  it("abstains when the caller cancels", async () => {
    respond = (res) => {
      setTimeout(() => sendJson(200, completion("{}"))(res), 1000);
    };
    const verdict = await classifier().classify(question, AbortSignal.timeout(50));
    expect(verdict).toMatchObject({ decision: "abstain", reason: "cancelled by the caller" });
  });

  it("abstains on HTTP 500, with the status and the server's message", async () => {
    respond = sendJson(500, { error: { message: "model overloaded" } });
    const verdict = await classifier().classify(question);
    expect(verdict).toMatchObject({ decision: "abstain", probability: 0, model: "clef-flash" });
    expect(verdict.reason).toMatch(/HTTP 500 .*model overloaded/);
  });

  it("abstains on a body that is not JSON", async () => {
    respond = (res) => res.writeHead(200, { "content-type": "application/json" }).end('{"choices": [');
    const verdict = await classifier().classify(question);
    expect(verdict).toMatchObject({ decision: "abstain", probability: 0 });
    expect(verdict.reason).toMatch(/response body is not JSON/);
  });

  it("abstains on JSON without choices[0].message.content", async () => {
    respond = sendJson(200, { choices: [] });
    const verdict = await classifier().classify(question);
    expect(verdict).toMatchObject({
      decision: "abstain",
      reason: expect.stringMatching(/choices\[0\]\.message\.content/),
    });
  });

  it("abstains when the model's content is not the expected JSON", async () => {
    respond = sendJson(200, completion("Sure! I would skip this one."));
    const notJson = await classifier().classify(question);
    expect(notJson).toMatchObject({ decision: "abstain", reason: expect.stringMatching(/answer is not JSON/) });

    respond = sendJson(200, completion('{"decision":"skip","probability":1.5,"reason":"very sure"}'));
    const outOfRange = await classifier().classify(question);
    expect(outOfRange).toMatchObject({ decision: "abstain", reason: expect.stringMatching(/probability must be/) });
  });

  it("abstains when nothing listens on the port", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    const verdict = await classifier({ baseUrl: `http://127.0.0.1:${port}/v1` }).classify(question);
    expect(verdict).toMatchObject({ decision: "abstain", probability: 0, model: "clef-flash" });
    expect(verdict.reason).toMatch(/ECONNREFUSED/);
  });
});

describe("classifierFromSettings", () => {
  it("abstains without a call when no URL is configured", async () => {
    const c = classifierFromSettings(parseSettings({}));
    expect(c).toBe(abstainClassifier);
    expect(await c.classify(question)).toEqual({
      decision: "abstain",
      probability: 0,
      model: "none",
      reason: "no classifier configured",
    });
  });

  it("calls the configured endpoint with the configured model and key", async () => {
    respond = sendJson(200, completion('{"decision":"wake","probability":0.75,"reason":"shared folder"}'));
    const settings = parseSettings({
      OVERLAP_CLASSIFIER_URL: baseUrl,
      OVERLAP_CLASSIFIER_MODEL: "qwen-small",
      OVERLAP_CLASSIFIER_API_KEY: "sk-env",
    });
    const c = classifierFromSettings(settings);
    expect(c.name).toBe("openai-compatible");
    expect(await c.classify(question)).toMatchObject({ decision: "wake", model: "qwen-small" });
    expect(recorded[0]?.body.model).toBe("qwen-small");
    expect(recorded[0]?.headers.authorization).toBe("Bearer sk-env");
  });

  it("refuses a URL without a model", () => {
    expect(() =>
      classifierFromSettings({
        ...parseSettings({}),
        OVERLAP_CLASSIFIER_URL: baseUrl,
        OVERLAP_CLASSIFIER_MODEL: undefined,
      }),
    ).toThrow(/OVERLAP_CLASSIFIER_MODEL is required/);
  });
});
