import { type WatchOptions, type WatchResult, type WatchUpdate, watchChange } from "../watch.ts";
import { type ChangeDraft, parseChange, parseChangeJson } from "../work-graph.ts";
import type { ClientBase } from "./base.ts";
import type { ChangeCandidate, CreateChangeOptions } from "./types.ts";

/** Changes: create, follow, cancel, their attempts, runs and Tasks. */
export function changeMethods({ trpc, call, tenantId, getChange }: ClientBase) {
  return {
    /**
     * Creates a Change from a Work Graph (JSON text or an object). It is checked here with the
     * server's own schema first: an invalid one throws BAD_REQUEST and sends nothing.
     */
    async createChange(
      projectId: string,
      change: string | ChangeDraft,
      options: CreateChangeOptions = {},
    ): Promise<{ changeId: string; created: boolean; clientRequestId: string }> {
      const input = typeof change === "string" ? parseChangeJson(change) : parseChange(change);
      const clientRequestId = options.clientRequestId ?? `sdk_${globalThis.crypto.randomUUID()}`;
      const t = await tenantId();
      const r = await call(() =>
        trpc.change.create.mutate({
          tenantId: t,
          projectId,
          clientRequestId,
          change: input,
          landWhenReady: options.land === true,
        }),
      );
      return { ...r, clientRequestId };
    },

    getChange,

    /** The Candidates composed from the Change, newest first (with the culprit Task of a rejected one). */
    async changeCandidates(changeId: string): Promise<ChangeCandidate[]> {
      const t = await tenantId();
      return call(() => trpc.change.candidates.query({ tenantId: t, changeId }));
    },

    /**
     * Polls the Change until it or its newest Candidate is final (see WatchOutcome), calling
     * `onUpdate` with the Task states whenever one moved. Stop early with `signal`.
     */
    async watchChange(
      changeId: string,
      onUpdate: (update: WatchUpdate) => void | Promise<void> = () => {},
      options: WatchOptions = {},
    ): Promise<WatchResult> {
      const t = await tenantId();
      return watchChange(
        {
          change: getChange,
          candidates: (id) => call(() => trpc.change.candidates.query({ tenantId: t, changeId: id })),
        },
        changeId,
        onUpdate,
        options,
      );
    },
  };
}
