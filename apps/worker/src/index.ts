export { nextCronRun, type Timers } from "./executors/cron.ts";
export {
  createInngestClient,
  createInngestExecutor,
  INNGEST_PATH,
  INNGEST_SPLIT_APP_IDS,
  InngestExecutor,
  type InngestExecutorOptions,
  type InngestSettings,
  inngestNudgeSender,
  nudgeEventName,
  toInngestFunctions,
} from "./executors/inngest.ts";
export { createLocalExecutor, LocalExecutor, type LocalExecutorOptions } from "./executors/local.ts";
export type { RunDeps, RunRecord } from "./executors/run.ts";
export type { Executor } from "./executors/types.ts";
export * from "./functions/index.ts";
export { productVersion, type WorkerIdentity, workerIdentity } from "./identity.ts";
export { createLogger, type Logger } from "./logger.ts";
export { nudgerFor } from "./nudger.ts";
export { startGitHttpServer } from "./source/git-http.ts";
export { pointMainsAtGenerations } from "./source/repair-mains.ts";
