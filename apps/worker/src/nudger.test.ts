import { pgNotifyNudger } from "@rhumbatron/runtime";
import type { Inngest } from "inngest";
import { describe, expect, it } from "vitest";
import { nudgerFor } from "./nudger.ts";

describe("the nudger the writing side uses", () => {
  it("is pg_notify for the local executor", () => {
    expect(nudgerFor({ RHUMBATRON_EXECUTOR: "local" })).toBe(pgNotifyNudger);
  });

  it("sends one Inngest event per nudge after the transaction commits, for the inngest executor", async () => {
    const sent: unknown[] = [];
    // The Inngest server is outside this machine: the client's send is the edge, recorded here.
    const client = { send: async (e: unknown) => void sent.push(e) } as unknown as Inngest;
    const nudger = nudgerFor({ RHUMBATRON_EXECUTOR: "inngest" }, client);
    const after: (() => Promise<void>)[] = [];
    await nudger.nudge(
      { afterCommit: (fn: () => Promise<void>) => after.push(fn) } as never,
      "queue_integration",
      "k1",
    );
    expect(sent).toEqual([]);
    for (const fn of after) await fn();
    expect(sent).toEqual([{ name: "rhumbatron/nudge.queue_integration", data: { key: "k1" } }]);
  });
});
