import type { z } from "zod";
import type { Environment, queuePolicy, RhumbatronConfig } from "./config-schema.ts";
import { PATCH_MAX_BYTES } from "./config-schema.ts";

/** The configuration's values (config.ts): the base every environment starts from, and what each changes. */

const queue = (p: z.input<typeof queuePolicy>) => p;

export const base: RhumbatronConfig = {
  env: "dev",
  streams: { count: 8, maxStreamsInProd: 20, retentionSeconds: 7 * 24 * 3600, sweepCron: "* * * * *" },
  outbox: { maxRowsPerProjectPerPublish: 100, backoffBaseSeconds: 1, backoffMaxSeconds: 300, maxAttempts: 10 },
  eventRouter: {
    batchSize: 100,
    nackDelaySeconds: 5,
    cursorLeaseSeconds: 60,
    consumesPerSubscriptionPerRun: 2,
    projectorMaxApplyCallsPerRun: 15,
    batchFailuresBeforeDeadLetter: 5,
    archiveRetentionDays: 30,
    metricsDataset: "rhumbatron_event_metrics_dev",
  },
  queues: {
    messageRetentionSeconds: 24 * 3600,
    leaseSeconds: 300,
    pollCron: "* * * * *",
    policies: {
      "agent-wakeups": queue({
        batchSize: 10,
        concurrency: 1,
        maxRetries: 3,
        retryDelaySeconds: 30,
        deadLetterQueue: "dead-letter",
        onExhaustion: "dead-letter",
      }),
      // 100, not 10 as first planned: one consumer settles a whole batch in one statement, so a batch
      // costs about the same number of round trips at 100 as at 10 (docs/benchmarks.md, `npm run
      // bench -- commands`).
      // Handlers with outside work run one by one anyway; a crash redelivers at most one batch.
      integration: queue({
        batchSize: 100,
        concurrency: 1,
        maxRetries: 3,
        retryDelaySeconds: 30,
        deadLetterQueue: "dead-letter",
        onExhaustion: "dead-letter",
      }),
      indexing: queue({
        batchSize: 1,
        concurrency: 1,
        maxRetries: 3,
        retryDelaySeconds: 30,
        deadLetterQueue: null,
        onExhaustion: "record-index-failure",
      }),
      verification: queue({
        batchSize: 5,
        concurrency: 1,
        maxRetries: 3,
        retryDelaySeconds: 30,
        deadLetterQueue: "dead-letter",
        onExhaustion: "dead-letter",
      }),
      release: queue({
        batchSize: 5,
        concurrency: 1,
        maxRetries: 3,
        retryDelaySeconds: 30,
        deadLetterQueue: "dead-letter",
        onExhaustion: "dead-letter",
      }),
      // Outgoing webhook deliveries, apart from everything else: a slow or failing receiver delays
      // nothing but other deliveries. Retries wait 30 s, 1, 2, 4 and 8 min (about a quarter hour).
      webhooks: queue({
        batchSize: 5,
        concurrency: 1,
        maxRetries: 5,
        retryDelaySeconds: 30,
        retryBackoff: "exponential",
        deadLetterQueue: "dead-letter",
        onExhaustion: "dead-letter",
      }),
      "dead-letter": queue({
        batchSize: 5,
        concurrency: 1,
        maxRetries: 5,
        retryDelaySeconds: 60,
        deadLetterQueue: null,
        onExhaustion: "drop-and-log",
      }),
    },
  },
  integration: {
    maxDeliveriesPerCommand: 4,
    maintenanceCron: "17 4 * * *",
    recompositionsPerChangePerHour: 6,
    conflictRepairsPerChange: 2,
    speculativeDepth: 4,
  },
  causal: {
    maxActiveAgentsPerChange: 8,
    commandsPerChangePerDay: 1000,
    classifierAbstainBelow: 0.7,
    classifierDailyCallCap: 200,
    startRetriesPerTask: 2,
  },
  source: {
    repoTokenTtlSeconds: 600,
    patchMaxBytes: PATCH_MAX_BYTES,
    codeStoreMaxBlobBytes: 1024 * 1024,
    gitRequestMaxBytes: 16 * 1024 * 1024,
    forkRetentionDays: 7,
    forksSweepCron: "0 3 * * *",
    importMaxBytes: 200 * 1024 * 1024,
    importMaxFiles: 20_000,
    importIdleSeconds: 60,
    pushTokenTtlSeconds: 3600,
    pushMaxBytes: 200 * 1024 * 1024,
  },
  sandbox: {
    openWorkspacesPerChange: 4,
    monthlySeconds: 18_000,
    deploymentMonthlySeconds: null,
    agentReservationSeconds: 300,
    candidateReservationSeconds: 900,
    agentIdleTailSeconds: 600,
    candidateIdleTailSeconds: 120,
    commandTimeoutSeconds: 180,
    maxOutputBytes: 1024 * 1024,
    maxProcesses: 256,
    setupCacheMaxBytes: 2 * 1024 * 1024 * 1024,
  },
  browser: { sessionMaxSeconds: 55, maxRunsPerCandidate: 2, concurrency: 1, warmIdleSeconds: 300 },
  api: { requestBodyMaxBytes: 2 * 1024 * 1024 },
  release: { webhookTimeoutSeconds: 30 },
  webhooks: { timeoutSeconds: 10, allowPrivateTargets: true, maxPerProject: 20, deliveryRetentionDays: 30 },
  checks: {
    defaultP95LimitMs: 200,
    rerunsPerCheck: 2,
    concurrency: 2,
  },
  tests: { failingAttempts: 3, newTestAttempts: 3, brokenAfter: 3, healthyAfterPasses: 10, quarantineDays: 14 },
  verification: { reuseEvidence: true, concurrency: 4 },
  worker: {
    heartbeatCron: "* * * * *",
    heartbeatSeconds: 10,
    heartbeatStaleSeconds: 30,
    takeoverSeconds: 30,
    agentRunsAtOnce: 4,
  },
};

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };
export type ConfigOverrides = DeepPartial<RhumbatronConfig>;

/** What differs in each environment from the base values above. */
export const perEnvironment: Record<Environment, ConfigOverrides> = {
  dev: {},
  prod: {
    env: "prod",
    eventRouter: { archiveRetentionDays: 365, metricsDataset: "rhumbatron_event_metrics_prod" },
    source: { forkRetentionDays: 30 },
    webhooks: { allowPrivateTargets: false },
  },
};
