import type { DeclaredCheck, SetupStep } from "./checks-file.ts";

/** What the detectors of each ecosystem share (detect-checks.ts reads their findings into one proposal). */

/** Where detected checks write their test reports: inside the gate folder, so a Change cannot pass by writing one. */
export const REPORTS = ".rhumbatron/reports";

/** Seconds per kind of check: a build or a lint is quick, a test suite gets the most the Sandbox allows bar a margin. */
export const TIMEOUT = { build: 300, test: 600, lint: 300 } as const;

/** npm init's test script: a project that has it has no tests, and running it only fails. */
export const NPM_PLACEHOLDER_TEST = /^echo\s+(["'])Error: no test specified\1\s*&&\s*exit\s+1$/;

/** `>=20`, `>= 20.11`, `^20`, `^20.11.1`: one lower bound, nothing else. Anything richer gives plain `node`. */
export const SIMPLE_NODE_RANGE = /^(?:>=\s*|\^)(\d+(?:\.\d+){0,2})$/;

/** Folders of installed or vendored code: their test files are not the project's. */
export const NOT_THE_PROJECTS = /(^|\/)(node_modules|\.venv|venv|\.tox|site-packages|vendor)\//;

/** A check before its id is settled: ids clash only when ecosystems are combined. */
export interface Proposed {
  /** The id it gets when free, and the one it falls back to when another ecosystem took it. */
  ids: [string, string];
  check: Omit<DeclaredCheck, "id">;
  /** The comment written above the check in the file. */
  why: string;
}

export interface Finding {
  /** The root files it was read from, for the file's header. */
  from: string[];
  requires: string[];
  /** The hosts its setup installs from (the checks file's `registries`). */
  registries?: string[];
  setup: { step: SetupStep; why: string }[];
  checks: Proposed[];
  reasons: string[];
}

/** The caller's reader of a file (DetectInput.read). */
export type Read = (path: string) => Promise<string | null>;

export const record = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

export const plural = (word: string, items: readonly string[]) => (items.length === 1 ? word : `${word}s`);

/** "build", "build and test", "build, test and lint". */
export function list(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}
