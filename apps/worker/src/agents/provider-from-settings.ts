import {
  type AgentProvider,
  type ConflictReviewer,
  DomainError,
  type Settings,
  scriptedProvider,
} from "@rhumbatron/core";
import { openAiConflictReviewer, skippedConflictReviewer } from "./conflict-reviewer.ts";
import { openAiAgentProvider } from "./openai-provider.ts";

type AgentModelSettings = Pick<
  Settings,
  | "AGENT_MODEL_URL"
  | "AGENT_MODEL_MODEL"
  | "AGENT_MODEL_API_KEY"
  | "AGENT_MODEL_MAX_STEPS"
  | "AGENT_MODEL_MAX_TOKENS"
  | "AGENT_MODEL_TIMEOUT_MS"
>;

/** The OpenAI-compatible agent when AGENT_MODEL_URL is set, else the scripted one (replays edit plans). */
export function agentProviderFromSettings(settings: AgentModelSettings): AgentProvider {
  const baseUrl = settings.AGENT_MODEL_URL;
  const model = settings.AGENT_MODEL_MODEL;
  if (!baseUrl) return scriptedProvider;
  // parseSettings already refuses this; repeated for settings built by hand (tests, scripts).
  if (!model) throw new DomainError("INVALID_CONFIG", "AGENT_MODEL_MODEL is required when AGENT_MODEL_URL is set");
  return openAiAgentProvider({
    baseUrl,
    model,
    apiKey: settings.AGENT_MODEL_API_KEY,
    maxSteps: settings.AGENT_MODEL_MAX_STEPS,
    maxTokens: settings.AGENT_MODEL_MAX_TOKENS,
    timeoutMs: settings.AGENT_MODEL_TIMEOUT_MS,
  });
}

/**
 * Conflict reviews ask the Agents' model (docs/verification.md, Conflict reviews): the same
 * endpoint, model, key
 * and per-call timeout. Without AGENT_MODEL_URL every review is skipped, and says so.
 */
export function conflictReviewerFromSettings(settings: AgentModelSettings): ConflictReviewer {
  const baseUrl = settings.AGENT_MODEL_URL;
  const model = settings.AGENT_MODEL_MODEL;
  if (!baseUrl) return skippedConflictReviewer;
  if (!model) throw new DomainError("INVALID_CONFIG", "AGENT_MODEL_MODEL is required when AGENT_MODEL_URL is set");
  return openAiConflictReviewer({
    baseUrl,
    model,
    apiKey: settings.AGENT_MODEL_API_KEY,
    timeoutMs: settings.AGENT_MODEL_TIMEOUT_MS,
  });
}
