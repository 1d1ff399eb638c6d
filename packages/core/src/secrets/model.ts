import { z } from "zod";

/**
 * Tenant secrets (docs/agents.md, Secrets): API keys an admin sets once for the tenant's Agent runs, which
 * get them as environment variables. A name is shaped like an environment variable; a value is
 * 1 byte to 8 KiB of UTF-8 without NUL (an environment variable cannot hold one).
 */
export const SECRET_NAME_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;
export const SECRET_VALUE_MAX_BYTES = 8 * 1024;

/**
 * Names a run's environment needs for itself: a secret with one of them would change how the
 * Sandbox finds programs, loads libraries or starts Node, so it is refused. `RHUMBATRON_` is the
 * product's own prefix.
 */
export const RESERVED_SECRET_NAMES: readonly string[] = [
  "HOME",
  "LD_LIBRARY_PATH",
  "LD_PRELOAD",
  "NODE_OPTIONS",
  "PATH",
  "PWD",
  "SHELL",
  "TMPDIR",
  "USER",
];

export const secretNameSchema = z
  .string()
  .regex(SECRET_NAME_PATTERN, "a secret's name is an environment variable's: A-Z first, then A-Z, 0-9 or _, at most 64")
  .refine((n) => !n.startsWith("RHUMBATRON_") && !RESERVED_SECRET_NAMES.includes(n), {
    message: `RHUMBATRON_… and ${RESERVED_SECRET_NAMES.join(", ")} are the run's own environment, not secrets`,
  });

const utf8Bytes = (s: string) => new TextEncoder().encode(s).length;

export const secretValueSchema = z
  .string()
  .min(1, "a secret's value cannot be empty")
  .refine((v) => !v.includes("\u0000"), { message: "a secret's value cannot contain a NUL character", abort: true })
  .refine((v) => utf8Bytes(v) <= SECRET_VALUE_MAX_BYTES, {
    message: `a secret's value is at most ${SECRET_VALUE_MAX_BYTES} bytes`,
  });

export const setSecretInput = z.object({ name: secretNameSchema, value: secretValueSchema });
export type SetSecretInput = z.infer<typeof setSecretInput>;
