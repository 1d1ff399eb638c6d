import type { ClientBase } from "./base.ts";
import type { LandingQueueEntry, LandingQueueSetResult, LandingQueueStatus, LandingResult } from "./types.ts";

/** The landing queue and a Change's place in it. */
export function landingMethods({ trpc, call, tenantId }: ClientBase) {
  return {
    /** Turns "land when ready" on or off for a Change; on for a ready Change, it lands in queue order. */
    async setLanding(changeId: string, landWhenReady: boolean): Promise<LandingResult> {
      const t = await tenantId();
      return call(() => trpc.change.setLanding.mutate({ tenantId: t, changeId, landWhenReady }));
    },

    /** A project's landing queue: position, what each Change waits for, since when. */
    async landingQueue(projectId: string): Promise<LandingQueueEntry[]> {
      const t = await tenantId();
      return call(() => trpc.landing.queue.query({ tenantId: t, projectId }));
    },

    /** Whether the project's landing queue runs, is paused or drains, and since when. */
    async landingQueueStatus(projectId: string): Promise<LandingQueueStatus> {
      const t = await tenantId();
      return call(() => trpc.landing.status.query({ tenantId: t, projectId }));
    },

    /**
     * Pauses (nothing lands), drains (only what was verifying when it began lands) or resumes the
     * project's landing queue (admin). Resuming lands at once, in queue order, what is ready.
     */
    async setLandingQueue(projectId: string, state: "running" | "paused" | "draining"): Promise<LandingQueueSetResult> {
      const t = await tenantId();
      return call(() => trpc.landing.setState.mutate({ tenantId: t, projectId, state }));
    },

    /**
     * Gives a Change waiting in the landing queue a priority (0 to 1000, higher lands first among
     * the ready ones), or moves it to the front with "front" (admin).
     */
    async setLandingPriority(
      changeId: string,
      priority: number | "front",
    ): Promise<{ priority: number; previous: number; changed: boolean }> {
      const t = await tenantId();
      return call(() => trpc.landing.setPriority.mutate({ tenantId: t, changeId, priority }));
    },
  };
}
