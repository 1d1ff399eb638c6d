import { z } from "zod";
import { base, type ConfigOverrides, perEnvironment } from "./config-defaults.ts";
import { configSchema, ENVIRONMENTS, type Environment, type RhumbatronConfig } from "./config-schema.ts";
import { DomainError } from "./errors.ts";

/**
 * Every number the product's rules name lives here, typed and validated, with per-environment
 * overrides. Code elsewhere reads these values; a literal duplicating one of them is a defect.
 * Durations are in seconds unless the key says otherwise (`…Ms`, `…Days`, `…Bytes`).
 */

export type { ConfigOverrides } from "./config-defaults.ts";
export {
  configSchema,
  ENVIRONMENTS,
  type Environment,
  PATCH_MAX_BYTES,
  QUEUE_PURPOSES,
  type QueuePurpose,
  type RhumbatronConfig,
} from "./config-schema.ts";

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function merge<T>(target: T, patch: unknown): T {
  if (!isPlainObject(patch) || !isPlainObject(target)) return (patch === undefined ? target : patch) as T;
  const out: Record<string, unknown> = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? merge(out[k], v) : v;
  }
  return out as T;
}

function deepFreeze<T>(o: T): T {
  if (isPlainObject(o)) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/**
 * Builds the validated configuration for one environment. `overrides` (for example from tests or
 * from settings) apply last. Invalid values throw a DomainError INVALID_CONFIG naming each path.
 */
export function loadConfig(env: Environment = "dev", overrides: ConfigOverrides = {}): RhumbatronConfig {
  const merged = merge(merge(structuredClone(base), perEnvironment[env]), { ...overrides, env });
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new DomainError("INVALID_CONFIG", `invalid configuration: ${issues.join("; ")}`, { issues });
  }
  return deepFreeze(parsed.data);
}

export function parseEnvironment(value: string | undefined): Environment {
  if (value === undefined || value === "") return "dev";
  const parsed = z.enum(ENVIRONMENTS).safeParse(value);
  if (!parsed.success) {
    throw new DomainError("INVALID_CONFIG", `RHUMBATRON_ENV must be one of ${ENVIRONMENTS.join(", ")}, got "${value}"`);
  }
  return parsed.data;
}
