import { afterEach } from "vitest";

/**
 * Whatever a test file starts that must stop (whole workers, executors): push it on the list this
 * returns, and it is stopped after each test. Kept out of test-world.ts, which the benches import
 * outside vitest.
 */
export function stoppedAfterEach<T extends { stop(): Promise<void> } = { stop(): Promise<void> }>(): T[] {
  const running: T[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((e) => e.stop()));
  });
  return running;
}
