import { describe, expect, it } from "vitest";
import { loadConfig, parseEnvironment } from "./config.ts";
import { DomainError } from "./errors.ts";

describe("configuration", () => {
  it("holds the documented defaults in dev", () => {
    const c = loadConfig("dev");
    expect(c.streams.count).toBe(8);
    expect(c.streams.retentionSeconds).toBe(604_800);
    expect(c.outbox).toEqual({
      maxRowsPerProjectPerPublish: 100,
      backoffBaseSeconds: 1,
      backoffMaxSeconds: 300,
      maxAttempts: 10,
    });
    expect(c.queues.policies["agent-wakeups"]).toMatchObject({ batchSize: 10, maxRetries: 3, retryDelaySeconds: 30 });
    expect(c.queues.policies["dead-letter"]).toMatchObject({
      batchSize: 5,
      maxRetries: 5,
      retryDelaySeconds: 60,
      deadLetterQueue: null,
    });
    expect(c.queues.policies.indexing).toMatchObject({
      batchSize: 1,
      concurrency: 1,
      onExhaustion: "record-index-failure",
    });
    expect(c.queues.messageRetentionSeconds).toBe(86_400);
    expect(c.integration).toEqual({
      maxDeliveriesPerCommand: 4,
      maintenanceCron: "17 4 * * *",
      recompositionsPerChangePerHour: 6,
      conflictRepairsPerChange: 2,
      speculativeDepth: 4,
    });
    expect(c.causal).toEqual({
      maxActiveAgentsPerChange: 8,
      commandsPerChangePerDay: 1000,
      classifierAbstainBelow: 0.7,
      classifierDailyCallCap: 200,
      startRetriesPerTask: 2,
    });
    expect(c.source.repoTokenTtlSeconds).toBe(600);
    expect(c.source.patchMaxBytes).toBe(524_288);
    expect(c.source.gitRequestMaxBytes).toBe(16 * 1_048_576);
    expect(c.api.requestBodyMaxBytes).toBe(2 * 1_048_576);
    expect(c.sandbox.monthlySeconds).toBe(18_000);
    // 180 s per command: each Agent command's timeoutMs (apps/worker/src/agents/command-timeout.test.ts).
    expect(c.sandbox).toMatchObject({ maxOutputBytes: 1_048_576, maxProcesses: 256, commandTimeoutSeconds: 180 });
    expect(c.browser.sessionMaxSeconds).toBe(55);
    expect(c.source.forkRetentionDays).toBe(7);
    expect(c.eventRouter.archiveRetentionDays).toBe(30);
  });

  it("applies prod overrides", () => {
    const c = loadConfig("prod");
    expect(c.env).toBe("prod");
    expect(c.source.forkRetentionDays).toBe(30);
    expect(c.eventRouter.archiveRetentionDays).toBe(365);
    expect(c.eventRouter.metricsDataset).toBe("rhumbatron_event_metrics_prod");
    expect(c.streams.count).toBe(8);
  });

  it("refuses more than 20 streams in prod but allows them in dev", () => {
    expect(() => loadConfig("prod", { streams: { count: 21 } })).toThrow(/at most 20 streams/);
    expect(loadConfig("dev", { streams: { count: 21 } }).streams.count).toBe(21);
  });

  it("rejects invalid numbers with a typed error naming the path", () => {
    try {
      loadConfig("dev", { outbox: { maxAttempts: 0 } });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).code).toBe("INVALID_CONFIG");
      expect((err as DomainError).message).toContain("outbox.maxAttempts");
    }
  });

  it("is frozen so no caller can change a number at run time", () => {
    const c = loadConfig("dev");
    expect(() => {
      (c.streams as { count: number }).count = 3;
    }).toThrow();
  });

  it("parses the environment name", () => {
    expect(parseEnvironment(undefined)).toBe("dev");
    expect(parseEnvironment("prod")).toBe("prod");
    expect(() => parseEnvironment("staging")).toThrow(/RHUMBATRON_ENV/);
  });
});
