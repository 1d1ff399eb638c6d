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
});

export type Settings = z.infer<typeof settingsSchema>;

/** Parses settings; a bad value throws INVALID_CONFIG with one line per problem, naming the variable. */
export function parseSettings(env: Record<string, string | undefined>): Settings {
  const parsed = settingsSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")} ${i.message}`);
    throw new DomainError("INVALID_CONFIG", lines.join("; "), { issues: lines });
  }
  return parsed.data;
}
