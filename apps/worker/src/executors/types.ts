import type { ExecutorKind } from "@rhumbatron/core";

/** A driver for the worker functions (ARCHITECTURE.md, "Executors: one set of functions, two drivers"). */
export interface Executor {
  readonly kind: ExecutorKind;
  start(): Promise<void>;
  /** Waits for in-flight runs, then closes the executor's own connections (not the shared db). */
  stop(): Promise<void>;
}
