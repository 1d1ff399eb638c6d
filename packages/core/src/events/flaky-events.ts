import { z } from "zod";

/** The Events of each test's history and quarantine (docs/flaky-tests.md), part of the catalogue. */
const id = z.string().min(1);
const count = z.number().int().nonnegative();
const health = z.enum(["ok", "flaky", "broken"]);
const testRef = z.object({ checkId: z.string(), testId: z.string(), name: z.string() });

export const TEST_EVENTS = {
  /** A test's health changed as a check recorded it, or the policy's rule quarantined it or let it go (docs/flaky-tests.md). */
  "test.status_changed": {
    version: 1,
    owner: "resource-shard",
    payload: testRef.extend({
      ...{ status: health, previous: health, quarantined: z.boolean(), candidateId: id },
      ...{ runs: count, flakyRuns: count, quarantine: z.enum(["entered", "left"]).nullable() },
    }),
  },
  /** An admin put a test in quarantine or took it out (docs/flaky-tests.md). */
  "test.quarantine_changed": {
    version: 1,
    owner: "project-root",
    payload: testRef.extend({
      quarantined: z.boolean(),
      reason: z.string(),
      expiresAt: z.string().nullable(),
      actorId: id,
    }),
  },
} as const;
