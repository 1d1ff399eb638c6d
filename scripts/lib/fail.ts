import { isDomainError } from "@rhumbatron/core";

/** A startup problem the person running the command can fix: printed as one line, exit code 1. */
export class StartupError extends Error {
  override name = "StartupError";
}

export function describeError(err: unknown): string {
  if (err instanceof StartupError || isDomainError(err)) return err.message;
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

export function exitWith(err: unknown): never {
  process.stderr.write(`rhumbatron: ${describeError(err)}\n`);
  if (process.env.RHUMBATRON_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  process.exit(1);
}
