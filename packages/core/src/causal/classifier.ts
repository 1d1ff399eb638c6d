/**
 * The overlap classifier port: it decides only a prefix-only resource overlap between a fresh Event
 * and an active Agent. Exact overlaps wake without asking; no overlap never wakes (docs/protocol.md,
 * Causal routing). Everything here is pure; adapters live in apps/worker/src/classifier.
 */

export interface OverlapQuestion {
  changeId: string;
  eventType: string;
  // Read-only so the router's HeldResources and overlap pairs pass straight in.
  eventPaths: readonly string[];
  agent: { agentId: string; taskId: string; paths: readonly string[]; prefixes: readonly string[] };
  /** The prefix-only pairs that made the overlap ambiguous. */
  overlaps: readonly { eventPath: string; agentPath: string }[];
}

export type OverlapDecision = "wake" | "skip" | "abstain";

export interface OverlapVerdict {
  decision: OverlapDecision;
  /** The classifier's confidence in `decision`, 0..1; 0 for an abstention it did not reason about. */
  probability: number;
  /** The model that answered ("none" when no call was made); recorded on the model_route metric. */
  model: string;
  reason: string;
}

export interface OverlapClassifier {
  readonly name: string;
  /** Never throws: a timeout, an HTTP error or an unreadable answer comes back as an abstain verdict. */
  classify(q: OverlapQuestion, signal?: AbortSignal): Promise<OverlapVerdict>;
}

/**
 * What the router does with a verdict. Only a confident skip skips: an abstention, a wake, or a skip
 * below the threshold wakes the agent, because a needless wake costs one turn while a missed one
 * leaves an agent working on stale files: an abstention wakes (docs/protocol.md, Causal routing).
 */
export function finalDecision(verdict: OverlapVerdict, abstainBelow: number): "wake" | "skip" {
  // Written so that NaN (never >= anything) also wakes.
  return verdict.decision === "skip" && verdict.probability >= abstainBelow ? "skip" : "wake";
}

/** At most `causal.classifierDailyCallCap` (200) calls a day per environment; past the cap the answer is "wake" without a call. */
export function classifierBudget(callsToday: number, cap: number): "call" | "cap_reached" {
  return callsToday < cap ? "call" : "cap_reached";
}

export interface ClassifierMessage {
  role: "system" | "user";
  content: string;
}

const SYSTEM_PROMPT = [
  "You route events to coding agents working on one change of a code repository.",
  "An agent holds files (exact paths) and folders (prefixes). An event touched some paths.",
  "The event and the agent overlap only by prefix: one path is a prefix of the other.",
  'Answer "wake" if the event may affect the agent\'s task, "skip" only if it clearly cannot.',
  'Reply with one JSON object and nothing else: {"decision":"wake"|"skip","probability":<0..1, your confidence in the decision>,"reason":"<one short sentence>"}',
].join("\n");

/** Path order carries no meaning, so sort it: the same question always yields the same prompt. */
const list = (paths: readonly string[]) => JSON.stringify([...new Set(paths)].sort());

/** The chat messages asking the model about one question; paths are JSON-quoted so none can break a line. */
export function classifierPrompt(q: OverlapQuestion): ClassifierMessage[] {
  const overlaps = q.overlaps
    .map((o) => `${JSON.stringify(o.eventPath)} ~ ${JSON.stringify(o.agentPath)}`)
    .sort()
    .join(", ");
  const user = [
    `Change: ${q.changeId}`,
    `Event: ${q.eventType}`,
    `Event paths: ${list(q.eventPaths)}`,
    `Agent: ${q.agent.agentId} on task ${q.agent.taskId}`,
    `Agent files: ${list(q.agent.paths)}`,
    `Agent folders: ${list(q.agent.prefixes)}`,
    `Prefix overlaps (event ~ agent): ${overlaps}`,
  ].join("\n");
  return [
    { role: "system", content: SYSTEM_PROMPT },
    { role: "user", content: user },
  ];
}

/** An abstention for an answer that could not be used; the reason says what was wrong with it. */
export function abstainVerdict(model: string, reason: string): OverlapVerdict {
  return { decision: "abstain", probability: 0, model, reason };
}

const FENCE = /^```(?:json)?\s*([\s\S]*?)\s*```$/i;
const show = (v: unknown) => (JSON.stringify(v) ?? String(v)).slice(0, 80);

/**
 * Reads the model's answer. Nothing is repaired or clamped: a probability of 1.5 says the model did
 * not follow the format, so its decision is not trusted either and the verdict is an abstention.
 */
export function parseClassifierAnswer(text: string, model: string): OverlapVerdict {
  const trimmed = text.trim();
  if (trimmed === "") return abstainVerdict(model, "empty answer");
  const body = FENCE.exec(trimmed)?.[1] ?? trimmed;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return abstainVerdict(model, `answer is not JSON: ${show(trimmed)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return abstainVerdict(model, `answer is not a JSON object: ${show(value)}`);
  }
  const { decision, probability, reason } = value as Record<string, unknown>;
  for (const [field, v] of [
    ["decision", decision],
    ["probability", probability],
    ["reason", reason],
  ] as const) {
    if (v === undefined) return abstainVerdict(model, `answer is missing "${field}"`);
  }
  if (decision !== "wake" && decision !== "skip") {
    return abstainVerdict(model, `decision must be "wake" or "skip", got ${show(decision)}`);
  }
  if (typeof probability !== "number" || !(probability >= 0 && probability <= 1)) {
    return abstainVerdict(model, `probability must be a number from 0 to 1, got ${show(probability)}`);
  }
  if (typeof reason !== "string") return abstainVerdict(model, `reason must be a string, got ${show(reason)}`);
  return { decision, probability, model, reason };
}
