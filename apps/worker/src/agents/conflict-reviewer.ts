import {
  type ConflictReviewer,
  conflictReviewPrompt,
  parseConflictReviewAnswer,
  type ReviewAnswer,
} from "@rhumbatron/core";
import { chatCompletion, type OpenAiAgentOptions } from "./openai-provider.ts";

/**
 * Conflict reviews (docs/verification.md, Conflict reviews) behind the Agents' OpenAI-compatible
 * endpoint: one
 * chat completion (retried once, like an Agent's call), JSON mode where the server has it, the
 * answer read strictly by core. Every failure (HTTP, timeout, an unusable answer) is a `failed`
 * review with the reason, never a throw: a review informs the gate, it must not stop verification.
 */
export type ConflictReviewerOptions = Pick<OpenAiAgentOptions, "baseUrl" | "model" | "apiKey" | "timeoutMs" | "fetch">;

/** A review's answer is a few findings; this caps the reply, never above what common models allow. */
const MAX_REVIEW_TOKENS = 2048;

export function openAiConflictReviewer(options: ConflictReviewerOptions): ConflictReviewer {
  return {
    name: "openai-compatible",
    async review(q, signal): Promise<ReviewAnswer> {
      const reply = await chatCompletion(
        options,
        {
          model: options.model,
          messages: conflictReviewPrompt(q),
          temperature: 0,
          response_format: { type: "json_object" },
          max_tokens: MAX_REVIEW_TOKENS,
        },
        signal,
      );
      if (typeof reply === "string") return { status: "failed", model: options.model, reason: reply };
      const content = reply.choices[0]?.message.content;
      if (typeof content !== "string") {
        return { status: "failed", model: options.model, reason: "the reply has no text (choices[0].message.content)" };
      }
      return parseConflictReviewAnswer(content, options.model);
    },
  };
}

/** No model configured: every review is skipped, with the reason, and blocks nothing. */
export const skippedConflictReviewer: ConflictReviewer = {
  name: "none",
  async review() {
    return {
      status: "skipped",
      reason: "no model is configured for conflict reviews (set AGENT_MODEL_URL and AGENT_MODEL_MODEL)",
    };
  },
};
