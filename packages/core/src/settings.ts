import { z } from "zod";
import { ENVIRONMENTS } from "./config.ts";
import { DomainError } from "./errors.ts";

/**
 * Process settings (environment variables), validated at startup. `.env.example` documents each one.
 * Pure: the caller passes the environment in.
 */
export const EXECUTOR_KINDS = ["local", "inngest"] as const;
export type ExecutorKind = (typeof EXECUTOR_KINDS)[number];

const postgresUrl = z
  .string()
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === "postgres:" || u.protocol === "postgresql:") && u.hostname !== "" && u.pathname.length > 1;
    } catch {
      return false;
    }
  }, "must look like postgresql://user:password@host:5432/database")
  .optional();

const port = z.coerce.number().int().min(1).max(65535);
const emptyToUndefined = (v: unknown) => (v === "" ? undefined : v);

export const settingsSchema = z.object({
  DATABASE_URL: z.preprocess(emptyToUndefined, postgresUrl),
  PORT: z.preprocess(emptyToUndefined, port.default(3000)),
  RHUMBATRON_ENV: z.preprocess(emptyToUndefined, z.enum(ENVIRONMENTS).default("dev")),
  RHUMBATRON_EXECUTOR: z.preprocess(emptyToUndefined, z.enum(EXECUTOR_KINDS).default("local")),
  RHUMBATRON_DATA_DIR: z.preprocess(emptyToUndefined, z.string().default(".data")),
  RHUMBATRON_EMBEDDED_PG_PORT: z.preprocess(emptyToUndefined, port.default(54329)),
  RHUMBATRON_WORKER_PORT: z.preprocess(emptyToUndefined, port.default(3030)),
  /** 0 picks any free port (tests). */
  RHUMBATRON_GIT_PORT: z.preprocess(emptyToUndefined, z.coerce.number().int().min(0).max(65535).default(3031)),
  RHUMBATRON_GIT_PUBLIC_URL: z.preprocess(emptyToUndefined, z.string().url().default("http://localhost:3031/git")),
  RHUMBATRON_LOG_LEVEL: z.preprocess(
    emptyToUndefined,
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ),
  RHUMBATRON_LOCAL_USER_EMAIL: z.preprocess(
    emptyToUndefined,
    z.string().email().default("admin@demo.rhumbatron.local"),
  ),
  INNGEST_EVENT_KEY: z.preprocess(emptyToUndefined, z.string().optional()),
  INNGEST_SIGNING_KEY: z.preprocess(emptyToUndefined, z.string().optional()),
  INNGEST_BASE_URL: z.preprocess(emptyToUndefined, z.string().url().optional()),
  INNGEST_DEV: z.preprocess(emptyToUndefined, z.string().optional()),
  // The overlap classifier (spec: Causal routing). Unset URL: every prefix-only overlap wakes the agent.
  OVERLAP_CLASSIFIER_URL: z.preprocess(
    emptyToUndefined,
    z.url({ protocol: /^https?$/, error: "must be an http(s) URL, e.g. http://localhost:8080/v1" }).optional(),
  ),
  OVERLAP_CLASSIFIER_MODEL: z.preprocess(emptyToUndefined, z.string().optional()),
  OVERLAP_CLASSIFIER_API_KEY: z.preprocess(emptyToUndefined, z.string().optional()),
  OVERLAP_CLASSIFIER_TIMEOUT_MS: z.preprocess(emptyToUndefined, z.coerce.number().int().min(1).default(5000)),
  // The agent's model (OpenAI-compatible chat completions with tools). Unset URL: the scripted provider
  // replays each Task's edit plan.
  AGENT_MODEL_URL: z.preprocess(
    emptyToUndefined,
    z.url({ protocol: /^https?$/, error: "must be an http(s) URL, e.g. http://localhost:8080/v1" }).optional(),
  ),
  AGENT_MODEL_MODEL: z.preprocess(emptyToUndefined, z.string().optional()),
  AGENT_MODEL_API_KEY: z.preprocess(emptyToUndefined, z.string().optional()),
  /** Model calls per agent run before it is stopped as failed. */
  AGENT_MODEL_MAX_STEPS: z.preprocess(emptyToUndefined, z.coerce.number().int().min(1).default(30)),
  /** Total tokens (usage.total_tokens summed) per agent run before it is stopped as failed. */
  AGENT_MODEL_MAX_TOKENS: z.preprocess(emptyToUndefined, z.coerce.number().int().min(1).default(200_000)),
  /** Per model call. */
  AGENT_MODEL_TIMEOUT_MS: z.preprocess(emptyToUndefined, z.coerce.number().int().min(1).default(60_000)),
});

export type Settings = z.infer<typeof settingsSchema>;

/** Parses settings; a bad value throws INVALID_CONFIG with one line per problem, naming the variable. */
export function parseSettings(env: Record<string, string | undefined>): Settings {
  const parsed = settingsSchema.safeParse(env);
  const lines = parsed.success
    ? crossFieldIssues(parsed.data)
    : parsed.error.issues.map((i) => `${i.path.join(".")} ${i.message}`);
  if (!parsed.success || lines.length > 0) {
    throw new DomainError("INVALID_CONFIG", lines.join("; "), { issues: lines });
  }
  return parsed.data;
}

/** Rules that tie two variables together; each line names the variable to set. */
function crossFieldIssues(s: Settings): string[] {
  const lines: string[] = [];
  // An endpoint without a model name would fail on every call; say so at startup instead.
  if (s.OVERLAP_CLASSIFIER_URL && !s.OVERLAP_CLASSIFIER_MODEL) {
    lines.push("OVERLAP_CLASSIFIER_MODEL is required when OVERLAP_CLASSIFIER_URL is set");
  }
  if (s.AGENT_MODEL_URL && !s.AGENT_MODEL_MODEL) {
    lines.push("AGENT_MODEL_MODEL is required when AGENT_MODEL_URL is set");
  }
  return lines;
}
