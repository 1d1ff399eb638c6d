import type {
  AgentProvider,
  BlobStore,
  ConflictReviewer,
  OverlapClassifier,
  ProjectChecks,
  RhumbatronConfig,
  Sandbox,
  VerificationPolicy,
} from "@rhumbatron/core";
import type { Db } from "@rhumbatron/db";
import type { Nudger } from "@rhumbatron/runtime";
import type { Logger } from "pino";
import type { AgentProgramName, InstalledProgram } from "./agents/programs/install.ts";
import type { WorkerIdentity } from "./identity.ts";
import type { DatabaseOutage } from "./outage.ts";
import type { SourceApi } from "./source/store.ts";
import type { BrowserCheckInput, BrowserCheckResult } from "./verification/browser-check.ts";

/**
 * Every handle the worker's parts may be given, named once. Each part declares the slice it needs
 * (`Pick<WorkerContext, …>`), so a test hands a part only what that part reads; main.ts builds the
 * handles from settings and hands each part its slice (functions/index.ts, FunctionDeps), never a
 * value of the whole type (ARCHITECTURE.md, The rooms).
 */
export interface WorkerContext {
  db: Db;
  config: RhumbatronConfig;
  /** How a committed write wakes other functions (pg_notify locally, Inngest events otherwise). */
  nudger: Nudger;
  now: () => Date;
  blobs: BlobStore;
  /** The git repositories (isomorphic-git). */
  source: SourceApi;
  sandbox: Sandbox;
  /** The Agents' model endpoint (scripted, or an OpenAI-compatible server). */
  provider: AgentProvider;
  /** Executables Sandbox commands may run. */
  allowlist: string[];
  /** Decides prefix-only overlaps for the causal router. */
  classifier: OverlapClassifier;
  /** Reviews files two Tasks both changed (docs/verification.md, Conflict reviews); absent: every review is skipped. */
  reviewer?: ConflictReviewer;
  /** Tests only: a verification policy that stands in for every project's own (project_policies). */
  policy?: VerificationPolicy;
  /** Tests only: checks that stand in for every project's checks file at the base (verification/project-checks.ts). */
  projectChecks?: ProjectChecks;
  /** The browser check (Chromium). */
  browserCheck: (input: BrowserCheckInput) => Promise<BrowserCheckResult>;
  /** Where folder releases are written (`<data dir>/releases`). */
  releaseRoot: string;
  /** The project template new repositories start from; the bundled one when absent. */
  templateDir?: string;
  /** Opens an import's sealed credentials (RHUMBATRON_AUTH_SECRET, as the web seals them; docs/repositories.md). */
  credentialSecret?: string;
  logger: Logger;
  /**
   * The coding-agent programs installed on this worker's host (agents/programs/install.ts), mounted
   * read-only in its Sandbox; a program Agent whose program is missing blocks its Task saying so.
   */
  agentPrograms?: ReadonlyMap<AgentProgramName, InstalledProgram>;
  /**
   * Where loops report their failures, so a database outage is one line, not one per loop per tick
   * (outage.ts); absent: each failure is logged as it comes.
   */
  outage?: DatabaseOutage;
  worker: WorkerIdentity;
}
