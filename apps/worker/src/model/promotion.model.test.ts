import { createDb } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { describe, expect, it } from "vitest";
import { runModelCheck } from "./promotion-check.testing.ts";

/**
 * The promotion protocol, model-based (docs/model-check.md): random sequences of create, compose,
 * verify, approve or reject, recompose, promote (one at a time, two at once, or crashed and
 * retried) and cancel, on the real database and git repositories, each answer compared with the
 * model's and the invariants checked after every command. `npm run model-check` runs thousands.
 */
const t = useTestDatabase();

describe("the promotion protocol against its model", () => {
  it("answers as the model does and keeps every invariant, over a few hundred random runs", async () => {
    // Four lanes side by side: a pool of its own, wider than the file's, so they do not wait on it.
    const db = createDb(t.url, { maxConnections: 10 });
    try {
      const result = await runModelCheck({ db, runs: 200, seed: 20_261_205, lanes: 4, maxCommands: 10 });
      expect(result.reports.join("\n\n")).toBe("");
      expect(result.failures).toBe(0);
      expect(result.commands).toBeGreaterThan(result.runs * 3);
      expect(result.outcomes["promote: promoted"]).toBeGreaterThan(0);
      expect(result.outcomes["crashed, then retried"]).toBeGreaterThan(0);
    } finally {
      await db.$disconnect();
    }
  }, 300_000);
});
