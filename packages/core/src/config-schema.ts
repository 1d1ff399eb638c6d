import { z } from "zod";

/**
 * The shape of the configuration (config.ts): every key with its type and limits, and the rules
 * that tie keys together.
 */

export const ENVIRONMENTS = ["dev", "prod"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export const QUEUE_PURPOSES = [
  "agent-wakeups",
  "integration",
  "indexing",
  "verification",
  "release",
  "webhooks",
  "dead-letter",
] as const;
export type QueuePurpose = (typeof QUEUE_PURPOSES)[number];

/** Each ChangeSet patch stops at 512 KB (docs/protocol.md, ChangeSets); a Task's edit plan may not write more. */
export const PATCH_MAX_BYTES = 512 * 1024;

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();
const cron = z.string().regex(/^(\S+\s+){4}\S+$/, "a five-field cron expression");

export const queuePolicy = z.object({
  batchSize: positiveInt,
  /** How many deliveries run at once for this queue (indexing is single-flight). */
  concurrency: positiveInt,
  maxRetries: nonNegativeInt,
  retryDelaySeconds: nonNegativeInt,
  /**
   * `exponential`: the n-th retry waits retryDelaySeconds × 2^(n-1) (a receiver that is down for a
   * while is not hammered); absent or `fixed`: every retry waits retryDelaySeconds.
   */
  retryBackoff: z.enum(["fixed", "exponential"]).optional(),
  /** Where a message goes when its retries run out; null means the rule in `onExhaustion`. */
  deadLetterQueue: z.enum(QUEUE_PURPOSES).nullable(),
  onExhaustion: z.enum(["dead-letter", "record-index-failure", "drop-and-log"]),
});

export const configSchema = z
  .object({
    env: z.enum(ENVIRONMENTS),
    streams: z.object({
      count: positiveInt,
      /** Refuse a stream set larger than this in prod. */
      maxStreamsInProd: positiveInt,
      retentionSeconds: positiveInt,
      /** The cron sweep visits one stream per tick. */
      sweepCron: cron,
    }),
    outbox: z.object({
      maxRowsPerProjectPerPublish: positiveInt,
      backoffBaseSeconds: positiveInt,
      backoffMaxSeconds: positiveInt,
      /** The row goes to `failed` on this failed attempt. */
      maxAttempts: positiveInt,
    }),
    eventRouter: z.object({
      /** Entries read per consume (one batch). */
      batchSize: positiveInt,
      /** How long a nacked batch waits before it is delivered again. */
      nackDelaySeconds: positiveInt,
      /** A consumer's lease on a (subscription, stream) cursor; a crashed consumer's lease runs out. */
      cursorLeaseSeconds: positiveInt,
      consumesPerSubscriptionPerRun: positiveInt,
      projectorMaxApplyCallsPerRun: positiveInt,
      batchFailuresBeforeDeadLetter: positiveInt,
      archiveRetentionDays: positiveInt,
      metricsDataset: z.string().regex(/^[a-z0-9_]+$/),
    }),
    queues: z.object({
      messageRetentionSeconds: positiveInt,
      /** How long a consumer's lease on a message lasts before another consumer may take it. */
      leaseSeconds: positiveInt,
      /** Backstop poll of every queue; nudges on enqueue do the fast path. */
      pollCron: cron,
      policies: z.record(z.enum(QUEUE_PURPOSES), queuePolicy),
    }),
    integration: z.object({
      maxDeliveriesPerCommand: positiveInt,
      maintenanceCron: cron,
      /**
       * New Candidates one Change may get per rolling hour when canonical advances under it
       * (automatic recomposition); beyond it the next one waits for the window and says so.
       */
      recompositionsPerChangePerHour: positiveInt,
      /** Times a Change's conflicting Tasks are re-run by themselves on the new base (docs/landing.md); 0: never. */
      conflictRepairsPerChange: z.number().int().min(0).max(20),
      /**
       * Candidates of a project's landing queue composed and verified side by side, each on the one
       * below it (docs/landing.md, Speculative stacks); 1: each waits for the one before it to land.
       */
      speculativeDepth: z.number().int().min(1).max(16),
    }),
    causal: z.object({
      maxActiveAgentsPerChange: positiveInt,
      commandsPerChangePerDay: positiveInt,
      classifierAbstainBelow: z.number().min(0).max(1),
      classifierDailyCallCap: positiveInt,
      /**
       * Agent runs of one Task that failed before the Agent started (forking, checking out, picking
       * its Context Packet: this system's own steps) and are retried by themselves; past it, the Task
       * stays failed for a person to retry.
       */
      startRetriesPerTask: nonNegativeInt,
    }),
    source: z.object({
      repoTokenTtlSeconds: positiveInt,
      patchMaxBytes: positiveInt,
      codeStoreMaxBlobBytes: positiveInt,
      /** The largest (decompressed) request body the git endpoint reads for one upload-pack POST. */
      gitRequestMaxBytes: positiveInt,
      forkRetentionDays: positiveInt,
      forksSweepCron: cron,
      /** An imported repository (docs/repositories.md) larger than this on disk fails its import. */
      importMaxBytes: positiveInt,
      /** An imported repository whose imported branch head holds more files than this fails its import. */
      importMaxFiles: positiveInt,
      /** An import's HTTP request that receives nothing for this long fails, and is retried. */
      importIdleSeconds: positiveInt,
      /** How long the one-time token of a project waiting for a `git push` stays usable. */
      pushTokenTtlSeconds: positiveInt,
      /** The largest (decompressed) request body the git endpoint reads for one receive-pack POST (a push). */
      pushMaxBytes: positiveInt,
    }),
    sandbox: z.object({
      openWorkspacesPerChange: positiveInt,
      /** Each tenant's monthly Sandbox budget unless the deployment or the tenant sets its own. */
      monthlySeconds: positiveInt,
      /**
       * The deployment's budget from RHUMBATRON_SANDBOX_MONTHLY_SECONDS (configFromSettings), or null:
       * `monthlySeconds` applies. A tenant's own budget (tenant_sandbox_budgets) comes before both.
       */
      deploymentMonthlySeconds: positiveInt.nullable(),
      agentReservationSeconds: positiveInt,
      candidateReservationSeconds: positiveInt,
      agentIdleTailSeconds: positiveInt,
      candidateIdleTailSeconds: positiveInt,
      commandTimeoutSeconds: positiveInt,
      /** Each of stdout and stderr of one command is cut beyond this (CommandResult.truncated). */
      maxOutputBytes: positiveInt,
      /** Tasks (processes and threads) one command may have at once: a fork bomb stops here. */
      maxProcesses: positiveInt,
      /**
       * What a project's setup steps produced, kept by content (lockfile, command, toolchain) and
       * copied into later Candidates: at most this many bytes per project, oldest used evicted first.
       */
      setupCacheMaxBytes: positiveInt,
    }),
    browser: z.object({
      sessionMaxSeconds: positiveInt,
      maxRunsPerCandidate: positiveInt,
      /**
       * Browser checks of one Candidate that run at once (beside its command checks, which
       * `checks.concurrency` counts): each opens its own context in the worker's one warm Chromium.
       */
      concurrency: positiveInt,
      /** The warm Chromium browser checks share is closed after this long without a check (relaunched on the next). */
      warmIdleSeconds: positiveInt,
    }),
    api: z.object({
      /**
       * The largest tRPC request body the web server reads (413 beyond it). Room for a Change whose
       * Tasks write a few full-size patches; nothing legitimate comes near it.
       */
      requestBodyMaxBytes: positiveInt,
    }),
    release: z.object({
      /** How long a release webhook may take to answer. */
      webhookTimeoutSeconds: positiveInt,
    }),
    /** Outgoing webhooks of projects (docs/notifications.md). */
    webhooks: z.object({
      /** How long one delivery may take to answer (connect, send, status line). */
      timeoutSeconds: positiveInt,
      /**
       * Whether a webhook may reach loopback, private, link-local and other non-public addresses.
       * Off in prod (a hook must not be a way into the deployment's own network), on in dev (a
       * receiver on 127.0.0.1); RHUMBATRON_WEBHOOK_ALLOW_PRIVATE sets it either way.
       */
      allowPrivateTargets: z.boolean(),
      /** Webhooks one project may have. */
      maxPerProject: positiveInt,
      /**
       * How long finished deliveries (succeeded or failed) are kept, with their attempts: the
       * maintenance tick deletes older ones. Pending and retrying deliveries are never deleted.
       */
      deliveryRetentionDays: positiveInt,
    }),
    checks: z.object({
      defaultP95LimitMs: positiveInt,
      /** How often one check of one Candidate may be rerun after it ended in error or fail. */
      rerunsPerCheck: z.number().int().min(0).max(20),
      /**
       * Command checks of one Candidate that run at once in the Sandbox. `build` runs first (the
       * others read what it built); every other check then starts from its own copy of that tree,
       * so what one writes never reaches another. Each command keeps its own limits
       * (sandbox.maxProcesses, maxOutputBytes, its timeout). 1: one after another in one workspace.
       */
      concurrency: positiveInt,
    }),
    /** Each test's history, flaky tests and their quarantine (docs/flaky-tests.md). */
    tests: z.object({
      /**
       * Runs of a check with a test report on one tree while one of its tests failed and has not yet
       * passed there: a test that passes on another attempt is flaky, one that fails every attempt
       * failed. 1: no second attempt.
       */
      failingAttempts: z.number().int().min(1).max(10),
      /** Runs of a check on a Candidate that adds tests the project has never run: new tests must agree with themselves. */
      newTestAttempts: z.number().int().min(1).max(10),
      /** A test that failed every attempt on this many trees in a row is broken. */
      brokenAfter: z.number().int().min(1).max(100),
      /** A flaky or quarantined test that then passes on this many trees in a row is healthy again (and leaves quarantine). */
      healthyAfterPasses: z.number().int().min(1).max(1000),
      /** A quarantine without an expiry of its own ends after this many days. */
      quarantineDays: z.number().int().min(1).max(365),
    }),
    verification: z.object({
      /**
       * Whether a check whose inputs are byte-identical to a recorded pass of the same project (the
       * composed tree, the planned check, the setup, the toolchain, the checks file) reuses that pass
       * as new Evidence saying so instead of running again (docs/checks-file.md, Reused Evidence). Off: every
       * check runs.
       */
      reuseEvidence: z.boolean(),
      /**
       * Candidates one worker verifies at once (a speculative stack's verify side by side); each
       * runs its own checks with checks.concurrency.
       */
      concurrency: z.number().int().min(1).max(16),
    }),
    worker: z.object({
      heartbeatCron: cron,
      /** How often a worker process beats (a timer of its own, whichever executor runs its functions). */
      heartbeatSeconds: positiveInt,
      /** The health endpoint calls the worker stale when its last beat is older than this. */
      heartbeatStaleSeconds: positiveInt,
      /**
       * A lease (queue message, stream cursor, workflow instance, Agent run) whose holder has not beaten
       * for this long is taken over by another worker, whatever time its lease still has.
       */
      takeoverSeconds: positiveInt,
      /**
       * Agent runs one worker executes at once, each in its own Sandbox workspace: a model Agent
       * mostly waits on its model, so several share the host's cores (docs/landing.md).
       */
      agentRunsAtOnce: z.number().int().min(1).max(16),
    }),
  })
  .superRefine((cfg, ctx) => {
    if (cfg.worker.takeoverSeconds < 2 * cfg.worker.heartbeatSeconds) {
      ctx.addIssue({
        code: "custom",
        path: ["worker", "takeoverSeconds"],
        message: `must be at least two heartbeats (2 × ${cfg.worker.heartbeatSeconds} s), or a live worker's leases would be taken over`,
      });
    }
    if (cfg.env === "prod" && cfg.streams.count > cfg.streams.maxStreamsInProd) {
      ctx.addIssue({
        code: "custom",
        path: ["streams", "count"],
        message: `prod allows at most ${cfg.streams.maxStreamsInProd} streams, got ${cfg.streams.count}`,
      });
    }
    if (cfg.outbox.backoffBaseSeconds > cfg.outbox.backoffMaxSeconds) {
      ctx.addIssue({ code: "custom", path: ["outbox"], message: "backoff base exceeds backoff cap" });
    }
  });

export type RhumbatronConfig = z.infer<typeof configSchema>;
