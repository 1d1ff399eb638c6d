import { z } from "zod";
import { safeText } from "../input.ts";
import { secretNameSchema } from "../secrets/model.ts";

/**
 * Which Agent works a Task (docs/agents.md, Choosing the Agent): the project's default, overridden per Task
 * in the Work Graph. `scripted` replays the Task's edit plan; `model` is the tool loop over the
 * configured OpenAI-compatible endpoint (AGENT_MODEL_URL); `command` is a program the admin names,
 * run non-interactively in the Sandbox inside the Task's checkout (apps/worker/src/agents/command-agent.ts);
 * `program` is one of the coding-agent programs the worker installs (Claude Code, Codex, Gemini CLI, OpenCode), filled in
 * by its preset (apps/worker/src/agents/programs/presets.ts) and allowed to reach one model endpoint.
 * No choice anywhere: the worker's default (the model when AGENT_MODEL_URL is set, else scripted).
 */

/** A bare program name the Sandbox finds on its PATH (the system's and the toolchains'); never a path or a shell line. */
const program = safeText(100)
  .min(1, "name the program")
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._+-]*$/,
    "a bare program name on the Sandbox's PATH, like sh or node (no path, no spaces)",
  );

export const AGENT_TIMEOUT_BOUNDS = { min: 1, max: 3600, default: 900 } as const;

export const commandAgentSchema = z.strictObject({
  kind: z.literal("command"),
  /** argv: the program and its arguments, as given; no shell parses it. */
  argv: z.tuple([program], safeText(2000)).refine((a) => a.length <= 50, "at most 50 arguments"),
  /** Wall time of one run: past it the program's process group is killed and the run fails. */
  timeoutSeconds: z
    .number()
    .int()
    .min(AGENT_TIMEOUT_BOUNDS.min)
    .max(AGENT_TIMEOUT_BOUNDS.max)
    .default(AGENT_TIMEOUT_BOUNDS.default),
  /** The program may also edit files outside the Task's declared paths (otherwise such edits are a gap). */
  allowOutsidePaths: z.boolean().default(false),
  /** Tenant secrets given to each run as environment variables of their names (never written into the tree). */
  secrets: z.array(secretNameSchema).max(20).default([]),
});

/** The coding-agent programs with a preset: the only ones a `program` Agent may name. */
export const AGENT_PROGRAM_NAMES = ["claude-code", "codex", "gemini-cli", "opencode"] as const;
export type AgentProgramName = (typeof AGENT_PROGRAM_NAMES)[number];

/** Where a program's model answers: http(s) origin and optional path, no credentials, no query. */
const modelEndpoint = safeText(500).superRefine((text, ctx) => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    ctx.addIssue({ code: "custom", message: "the model endpoint must be a URL like https://models.example.com" });
    return;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    ctx.addIssue({ code: "custom", message: "the model endpoint must be an http:// or https:// URL" });
  } else if (url.username || url.password || url.search || url.hash) {
    ctx.addIssue({
      code: "custom",
      message: "the model endpoint carries no credentials, query or fragment: the key is a tenant secret (keySecret)",
    });
  }
});

export const programAgentSchema = z.strictObject({
  kind: z.literal("program"),
  program: z.enum(AGENT_PROGRAM_NAMES),
  /** The model name the endpoint expects. */
  model: safeText(200).min(1, "name the model"),
  /** The model endpoint's base URL (without /v1): the one place the run may reach. */
  endpoint: modelEndpoint,
  /** The tenant secret holding the endpoint's API key, given to the run as an environment variable. */
  keySecret: secretNameSchema,
  timeoutSeconds: commandAgentSchema.shape.timeoutSeconds,
  /**
   * Past this many tokens (input and output, as the program reports them) the run is stopped (its
   * process group killed as soon as its stream says so) and publishes nothing.
   */
  maxTokens: z.number().int().min(1).max(100_000_000).optional(),
  allowOutsidePaths: z.boolean().default(false),
});

export const agentChoiceSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("scripted") }),
  z.strictObject({ kind: z.literal("model") }),
  commandAgentSchema,
  programAgentSchema,
]);
export type AgentChoice = z.infer<typeof agentChoiceSchema>;
export type CommandAgent = z.infer<typeof commandAgentSchema>;
export type ProgramAgent = z.infer<typeof programAgentSchema>;

/** The choice in words, for pages and the CLI: `scripted`, `model`, `command: sh run-agent.sh (900 s)`. */
export function describeAgentChoice(choice: AgentChoice | null): string {
  if (choice === null) return "the worker's default";
  if (choice.kind === "program") {
    const limits = [`${choice.timeoutSeconds} s`, ...(choice.maxTokens ? [`${choice.maxTokens} tokens`] : [])];
    if (choice.allowOutsidePaths) limits.push("may edit outside its paths");
    return `${choice.program}: ${choice.model} at ${choice.endpoint}, key ${choice.keySecret} (${limits.join(", ")})`;
  }
  if (choice.kind !== "command") return choice.kind;
  const notes = [
    `${choice.timeoutSeconds} s`,
    ...(choice.allowOutsidePaths ? ["may edit outside its paths"] : []),
    ...(choice.secrets.length ? [`secrets ${choice.secrets.join(", ")}`] : []),
  ];
  return `command: ${choice.argv.join(" ")} (${notes.join(", ")})`;
}

/** A stored choice (a JSON column) read back through the schema; null when absent or no longer valid. */
export function storedAgentChoice(value: unknown): AgentChoice | null {
  if (value === null || value === undefined) return null;
  const parsed = agentChoiceSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}
