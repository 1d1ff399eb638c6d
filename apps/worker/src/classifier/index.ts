import { DomainError, type OverlapClassifier, type Settings } from "@rhumbatron/core";
import { abstainClassifier } from "./abstain.ts";
import { openAiCompatibleClassifier } from "./openai.ts";

export { abstainClassifier } from "./abstain.ts";
export { type OpenAiCompatibleOptions, openAiCompatibleClassifier } from "./openai.ts";

type ClassifierSettings = Pick<
  Settings,
  "OVERLAP_CLASSIFIER_URL" | "OVERLAP_CLASSIFIER_MODEL" | "OVERLAP_CLASSIFIER_API_KEY" | "OVERLAP_CLASSIFIER_TIMEOUT_MS"
>;

/** The OpenAI-compatible classifier when a URL is configured, else the abstaining one. */
export function classifierFromSettings(settings: ClassifierSettings): OverlapClassifier {
  const baseUrl = settings.OVERLAP_CLASSIFIER_URL;
  const model = settings.OVERLAP_CLASSIFIER_MODEL;
  if (!baseUrl) return abstainClassifier;
  // parseSettings already refuses this; repeated for settings built by hand (tests, scripts).
  if (!model)
    throw new DomainError("INVALID_CONFIG", "OVERLAP_CLASSIFIER_MODEL is required when OVERLAP_CLASSIFIER_URL is set");
  return openAiCompatibleClassifier({
    baseUrl,
    model,
    apiKey: settings.OVERLAP_CLASSIFIER_API_KEY,
    timeoutMs: settings.OVERLAP_CLASSIFIER_TIMEOUT_MS,
  });
}
