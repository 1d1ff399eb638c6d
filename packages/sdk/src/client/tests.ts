import type { ClientBase } from "./base.ts";
import type { TestQuarantineResult, TestRow } from "./types.ts";

export type TestFilter = "troubled" | "flaky" | "broken" | "quarantined" | "all";

/** A project's tests as their history reads, and their quarantine (docs/flaky-tests.md). */
export function testMethods({ trpc, call, tenantId }: ClientBase) {
  return {
    /** Flaky, broken and quarantined tests by default; `filter` one kind, or all. */
    async tests(projectId: string, filter: TestFilter = "troubled"): Promise<TestRow[]> {
      const t = await tenantId();
      return call(() => trpc.tests.list.query({ tenantId: t, projectId, filter }));
    },

    /** Quarantines a test (admin): its failures stop blocking until `expiresAt` (default: the deployment's days). */
    async quarantineTest(
      projectId: string,
      checkId: string,
      testId: string,
      reason: string,
      expiresAt?: string,
    ): Promise<TestQuarantineResult> {
      const t = await tenantId();
      return call(() =>
        trpc.tests.quarantine.mutate({
          tenantId: t,
          projectId,
          checkId,
          testId,
          reason,
          ...(expiresAt ? { expiresAt } : {}),
        }),
      );
    },

    /** Takes a test out of quarantine (admin): its failures block again. */
    async releaseTest(projectId: string, checkId: string, testId: string): Promise<TestQuarantineResult> {
      const t = await tenantId();
      return call(() => trpc.tests.release.mutate({ tenantId: t, projectId, checkId, testId }));
    },
  };
}
