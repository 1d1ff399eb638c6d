import { z } from "zod";
import { ENVIRONMENTS, loadConfig, type RhumbatronConfig } from "./config.ts";
import { DomainError } from "./errors.ts";
import { isValidBlobKey } from "./ports/blob-store.ts";
import { sandboxBudgetSecondsSchema } from "./sandbox/budget.ts";

/**
 * Process settings (environment variables), validated at startup. `.env.example` documents each one.
 * Pure: the caller passes the environment in.
 */
export const EXECUTOR_KINDS = ["local", "inngest"] as const;
export type ExecutorKind = (typeof EXECUTOR_KINDS)[number];
export const BLOB_STORE_KINDS = ["local", "s3"] as const;
export type BlobStoreKind = (typeof BLOB_STORE_KINDS)[number];

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
  /**
   * The address the web app, the worker's git endpoint and its Inngest endpoint listen on. Closed by
   * default: 127.0.0.1 is reachable from this machine only; 0.0.0.0 (or ::) exposes them, which belongs
   * behind a TLS proxy (docs/production.md, Exposing it).
   */
  HOST: z.preprocess(emptyToUndefined, z.string().trim().min(1).default("127.0.0.1")),
  RHUMBATRON_ENV: z.preprocess(emptyToUndefined, z.enum(ENVIRONMENTS).default("dev")),
  RHUMBATRON_EXECUTOR: z.preprocess(emptyToUndefined, z.enum(EXECUTOR_KINDS).default("local")),
  RHUMBATRON_DATA_DIR: z.preprocess(emptyToUndefined, z.string().default(".data")),
  RHUMBATRON_EMBEDDED_PG_PORT: z.preprocess(emptyToUndefined, port.default(54329)),
  /**
   * Set by `npm start` for web and worker when DATABASE_URL is its embedded Postgres (which it
   * restarts by itself), so what they say about an outage points at the log, not at DATABASE_URL.
   */
  RHUMBATRON_EMBEDDED_DB: z.preprocess(
    emptyToUndefined,
    z
      .enum(["1", "0"], { error: "must be 1 or 0" })
      .default("0")
      .transform((v) => v === "1"),
  ),
  RHUMBATRON_WORKER_PORT: z.preprocess(emptyToUndefined, port.default(3030)),
  /** 0 picks any free port (tests). */
  RHUMBATRON_GIT_PORT: z.preprocess(emptyToUndefined, z.coerce.number().int().min(0).max(65535).default(3031)),
  /** Where people and the web app reach the worker's git endpoint; unset: http://localhost:$RHUMBATRON_GIT_PORT/git. */
  RHUMBATRON_GIT_PUBLIC_URL: z.preprocess(emptyToUndefined, z.string().url().optional()),
  /**
   * The source service another process of this installation runs (docs/scale-out.md), e.g.
   * http://10.0.0.5:3031. Unset: this worker holds the repositories on its own disk and is the
   * source service for the others. Set: it keeps only working copies, and the web app asks it too.
   */
  RHUMBATRON_SOURCE_URL: z.preprocess(emptyToUndefined, z.string().url().optional()),
  /** The blob folder when blobs are kept in one (not s3); unset: `$RHUMBATRON_DATA_DIR/blobs`. */
  RHUMBATRON_BLOB_DIR: z.preprocess(emptyToUndefined, z.string().optional()),
  RHUMBATRON_LOG_LEVEL: z.preprocess(
    emptyToUndefined,
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ),
  /**
   * With RHUMBATRON_ENV=prod the worker refuses agent and check commands it cannot isolate
   * (no bubblewrap); `1` runs them as plain processes anyway. Outside prod they run, with a warning.
   */
  RHUMBATRON_ALLOW_UNISOLATED: z.preprocess(
    emptyToUndefined,
    z
      .enum(["1", "0", "true", "false"], { error: "must be 1 or 0" })
      .default("0")
      .transform((v) => v === "1" || v === "true"),
  ),
  /**
   * Every tenant's monthly Sandbox budget in seconds, unless a tenant admin set the tenant's own;
   * unset: `config.sandbox.monthlySeconds` (18,000 s). Applied by configFromSettings.
   */
  RHUMBATRON_SANDBOX_MONTHLY_SECONDS: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .trim()
      .regex(/^\d+$/, "must be a whole number of seconds, e.g. 72000")
      .transform(Number)
      .pipe(sandboxBudgetSecondsSchema)
      .optional(),
  ),
  /**
   * Whether project webhooks may reach loopback, private and link-local addresses
   * (docs/notifications.md). Unset: yes in dev, no in prod; `1` allows them in prod (a receiver
   * on the deployment's own network), `0` refuses them in dev too.
   */
  RHUMBATRON_WEBHOOK_ALLOW_PRIVATE: z.preprocess(
    emptyToUndefined,
    z
      .enum(["1", "0", "true", "false"], { error: "must be 1 or 0" })
      .transform((v) => v === "1" || v === "true")
      .optional(),
  ),
  // Sign-in (better-auth). The secret signs session cookies; required when RHUMBATRON_ENV=prod.
  RHUMBATRON_AUTH_SECRET: z.preprocess(
    emptyToUndefined,
    z.string().min(32, "must be at least 32 characters (e.g. `openssl rand -base64 32`)").optional(),
  ),
  /** The web app's address as people reach it; unset: http://localhost:$PORT (and 127.0.0.1). */
  RHUMBATRON_PUBLIC_URL: z.preprocess(
    emptyToUndefined,
    z.url({ protocol: /^https?$/, error: "must be an http(s) URL, e.g. https://rhumbatron.example.com" }).optional(),
  ),
  /** The seeded demo admin's password; unset: DEV_DEMO_PASSWORD in dev, no password in prod. */
  RHUMBATRON_DEMO_PASSWORD: z.preprocess(
    emptyToUndefined,
    z.string().min(8, "must be at least 8 characters").max(128).optional(),
  ),
  /**
   * Where background functions are served: `worker` (default) runs every one in the worker;
   * `split` (deployments) serves the ones that need no Sandbox or source store from the web app at
   * /api/inngest and the rest from the worker host, both with the Inngest executor.
   */
  RHUMBATRON_FUNCTION_HOST: z.preprocess(emptyToUndefined, z.enum(["worker", "split"]).default("worker")),
  // The blob store (core's ports/blob-store.ts): `local` keeps blobs in $RHUMBATRON_DATA_DIR/blobs; `s3` uses an
  // S3-compatible bucket (R2, S3, MinIO) that the web app and the worker share.
  RHUMBATRON_BLOB_STORE: z.preprocess(emptyToUndefined, z.enum(BLOB_STORE_KINDS).default("local")),
  RHUMBATRON_S3_ENDPOINT: z.preprocess(
    emptyToUndefined,
    z
      .url({ protocol: /^https?$/, error: "must be an http(s) URL, e.g. https://<account>.r2.cloudflarestorage.com" })
      .optional(),
  ),
  RHUMBATRON_S3_BUCKET: z.preprocess(emptyToUndefined, z.string().optional()),
  /** `auto` for R2; the bucket's region for S3 (e.g. eu-west-1); MinIO accepts us-east-1. */
  RHUMBATRON_S3_REGION: z.preprocess(emptyToUndefined, z.string().default("auto")),
  RHUMBATRON_S3_ACCESS_KEY_ID: z.preprocess(emptyToUndefined, z.string().optional()),
  RHUMBATRON_S3_SECRET_ACCESS_KEY: z.preprocess(emptyToUndefined, z.string().optional()),
  /** A folder inside the bucket for every key (e.g. `rhumbatron-prod`); unset: the bucket's root. */
  RHUMBATRON_S3_PREFIX: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .refine(
        (v) => isValidBlobKey(v.replace(/^\/+|\/+$/g, "")),
        "must be a folder path of letters, digits and . _ @ = + - (e.g. rhumbatron/prod)",
      )
      .optional(),
  ),
  INNGEST_EVENT_KEY: z.preprocess(emptyToUndefined, z.string().optional()),
  INNGEST_SIGNING_KEY: z.preprocess(emptyToUndefined, z.string().optional()),
  INNGEST_BASE_URL: z.preprocess(emptyToUndefined, z.string().url().optional()),
  INNGEST_DEV: z.preprocess(emptyToUndefined, z.string().optional()),
  // The overlap classifier (docs/protocol.md, Causal routing). Unset URL: every prefix-only overlap wakes the agent.
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

/** The auth secret outside prod when RHUMBATRON_AUTH_SECRET is unset: public, so never for real use. */
export const DEV_AUTH_SECRET = "rhumbatron-dev-auth-secret-do-not-use-in-production";
/** The demo admin's password outside prod when RHUMBATRON_DEMO_PASSWORD is unset (docs/sign-in.md, Sign-in and API tokens). */
export const DEV_DEMO_PASSWORD = "rhumbatron-demo";

export function authSecret(s: Settings): string {
  return s.RHUMBATRON_AUTH_SECRET ?? DEV_AUTH_SECRET;
}

/** The password the seed gives the demo admin, or null (prod without RHUMBATRON_DEMO_PASSWORD): none. */
export function demoPassword(s: Settings): string | null {
  return s.RHUMBATRON_DEMO_PASSWORD ?? (s.RHUMBATRON_ENV === "prod" ? null : DEV_DEMO_PASSWORD);
}

/**
 * The environment's configuration with what the settings change in it: the deployment's Sandbox
 * budget (RHUMBATRON_SANDBOX_MONTHLY_SECONDS) and whether webhooks may reach private addresses
 * (RHUMBATRON_WEBHOOK_ALLOW_PRIVATE). The web app and the worker both build theirs here, so both
 * decide with the same budget, and a hook the web accepts is one the worker may deliver to.
 */
export function configFromSettings(s: Settings): RhumbatronConfig {
  const budget = s.RHUMBATRON_SANDBOX_MONTHLY_SECONDS;
  const allowPrivate = s.RHUMBATRON_WEBHOOK_ALLOW_PRIVATE;
  return loadConfig(s.RHUMBATRON_ENV, {
    ...(budget === undefined ? {} : { sandbox: { deploymentMonthlySeconds: budget } }),
    ...(allowPrivate === undefined ? {} : { webhooks: { allowPrivateTargets: allowPrivate } }),
  });
}

/** Whether the worker must refuse commands it cannot isolate: prod, unless RHUMBATRON_ALLOW_UNISOLATED. */
export function requiresIsolation(s: Settings): boolean {
  return s.RHUMBATRON_ENV === "prod" && !s.RHUMBATRON_ALLOW_UNISOLATED;
}

/** The worker's git endpoint as clients reach it: RHUMBATRON_GIT_PUBLIC_URL, else the local git port. */
export function gitPublicUrl(s: Settings): string {
  return (s.RHUMBATRON_GIT_PUBLIC_URL ?? `http://localhost:${s.RHUMBATRON_GIT_PORT}/git`).replace(/\/+$/, "");
}

/** Where people reach the web app: RHUMBATRON_PUBLIC_URL, else http://localhost:$PORT. */
export function publicUrl(s: Settings): string {
  return (s.RHUMBATRON_PUBLIC_URL ?? `http://localhost:${s.PORT}`).replace(/\/+$/, "");
}

/**
 * The origins the web app's own pages are served from: the public URL's, and without one also
 * http://127.0.0.1:$PORT (people reach a local install as localhost or 127.0.0.1). better-auth
 * trusts them for sign-in, and the tRPC route refuses a cookie-authenticated mutation from any other.
 */
export function appOrigins(s: Settings): string[] {
  return [new URL(publicUrl(s)).origin, ...(s.RHUMBATRON_PUBLIC_URL ? [] : [`http://127.0.0.1:${s.PORT}`])];
}

/** Parses settings; a bad value throws INVALID_CONFIG with one line per problem, naming the variable. */
export function parseSettings(env: Record<string, string | undefined>): Settings {
  // LOG_LEVEL, the name most tools read, stands in for RHUMBATRON_LOG_LEVEL when that is unset.
  const parsed = settingsSchema.safeParse(
    env.RHUMBATRON_LOG_LEVEL || !env.LOG_LEVEL ? env : { ...env, RHUMBATRON_LOG_LEVEL: env.LOG_LEVEL },
  );
  const lines = parsed.success
    ? crossFieldIssues(parsed.data)
    : parsed.error.issues.map((i) => `${i.path.join(".")} ${i.message}`);
  if (!parsed.success || lines.length > 0) {
    throw new DomainError("INVALID_CONFIG", lines.join("; "), { issues: lines });
  }
  return parsed.data;
}

const S3_REQUIRED = [
  "RHUMBATRON_S3_ENDPOINT",
  "RHUMBATRON_S3_BUCKET",
  "RHUMBATRON_S3_ACCESS_KEY_ID",
  "RHUMBATRON_S3_SECRET_ACCESS_KEY",
] as const;

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
  if (s.RHUMBATRON_BLOB_STORE === "s3") {
    for (const name of S3_REQUIRED) {
      if (!s[name]) lines.push(`${name} is required when RHUMBATRON_BLOB_STORE=s3`);
    }
  }
  // A known secret would let anyone forge a session cookie.
  if (s.RHUMBATRON_ENV === "prod" && !s.RHUMBATRON_AUTH_SECRET) {
    lines.push("RHUMBATRON_AUTH_SECRET is required when RHUMBATRON_ENV=prod (e.g. `openssl rand -base64 32`)");
  }
  if (s.RHUMBATRON_ENV === "prod" && s.RHUMBATRON_AUTH_SECRET === DEV_AUTH_SECRET) {
    lines.push("RHUMBATRON_AUTH_SECRET must not be the public development secret when RHUMBATRON_ENV=prod");
  }
  return lines;
}
