import {
  abstainVerdict,
  classifierPrompt,
  type OverlapClassifier,
  type OverlapQuestion,
  type OverlapVerdict,
  parseClassifierAnswer,
} from "@rhumbatron/core";

export interface OpenAiCompatibleOptions {
  /** API base such as http://localhost:8080/v1; `/chat/completions` is appended. */
  baseUrl: string;
  model: string;
  apiKey?: string | undefined;
  timeoutMs: number;
  /** Injected in tests; the global fetch otherwise. */
  fetch?: typeof fetch;
}

/**
 * An overlap classifier behind any OpenAI-compatible chat-completions API (OpenAI, llama.cpp server,
 * vLLM, Ollama, Workers AI's compatible endpoint). Every failure is an abstention with the reason,
 * so the router wakes the agent and an outage of the model never stalls routing.
 */
export function openAiCompatibleClassifier(options: OpenAiCompatibleOptions): OverlapClassifier {
  const endpoint = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  return {
    name: "openai-compatible",
    async classify(q, signal) {
      const timeout = AbortSignal.timeout(options.timeoutMs);
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
      try {
        return await ask(options, endpoint, q, combined);
      } catch (err) {
        // Aborts surface from fetch or from reading the body, whichever was in progress.
        if (timeout.aborted) return abstainVerdict(options.model, `no answer within ${options.timeoutMs} ms`);
        if (signal?.aborted) return abstainVerdict(options.model, "cancelled by the caller");
        return abstainVerdict(options.model, `request to ${endpoint} failed: ${describeError(err)}`);
      }
    },
  };
}

async function ask(
  options: OpenAiCompatibleOptions,
  endpoint: string,
  q: OverlapQuestion,
  signal: AbortSignal,
): Promise<OverlapVerdict> {
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  const res = await (options.fetch ?? fetch)(endpoint, {
    method: "POST",
    headers,
    body: JSON.stringify({
      model: options.model,
      messages: classifierPrompt(q),
      // Deterministic answers, and JSON mode where the server supports it (others ignore the field).
      temperature: 0,
      response_format: { type: "json_object" },
    }),
    signal,
  });
  const text = await res.text();
  if (!res.ok) return abstainVerdict(options.model, `HTTP ${res.status} from ${endpoint}: ${text.slice(0, 200)}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return abstainVerdict(options.model, `response body is not JSON: ${text.slice(0, 80)}`);
  }
  const content = (body as { choices?: { message?: { content?: unknown } }[] } | null)?.choices?.[0]?.message?.content;
  if (typeof content !== "string") {
    return abstainVerdict(options.model, "response has no choices[0].message.content string");
  }
  return parseClassifierAnswer(content, options.model);
}

/** fetch reports network failures as "fetch failed" with the useful part (ECONNREFUSED, …) in `cause`. */
function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = cause?.code ?? cause?.message;
  return detail ? `${err.message} (${String(detail)})` : err.message;
}
