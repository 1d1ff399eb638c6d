import { candidateStatusesInto } from "@rhumbatron/core";
import type { EnqueueDeps } from "@rhumbatron/runtime";
import type { Db } from "../client.ts";
import { domainWrite } from "../events/domain-write.ts";
import { changeEvent } from "../events/factory.ts";
import type { TxContext } from "../transaction.ts";

/**
 * A Candidate built on an older generation can no longer be promoted: canonical moved on to
 * `canonicalGeneration`. One statement (domainWrite): the Change's lock, a live Candidate to stale,
 * candidate.stale. Promotion writes it when it finds canonical moved, the causal router on
 * canonical.advanced (`causedBy`).
 */
export async function markCandidateStale(
  on: Db | TxContext,
  c: { id: string; changeId: string; projectId: string; tenantId: string },
  o: { canonicalGeneration: number; actor: string; causedBy?: string },
  deps: EnqueueDeps,
) {
  const generation = o.canonicalGeneration;
  const owner = { id: c.changeId, projectId: c.projectId, tenantId: c.tenantId, canonicalGeneration: generation };
  await domainWrite(
    on,
    {
      table: "candidates",
      id: c.id,
      changeId: c.changeId,
      projectId: c.projectId,
      expect: { status: candidateStatusesInto("stale") },
      set: { status: "stale" },
      events: [
        changeEvent(owner, "candidate.stale", {
          key: c.id,
          actor: { kind: "system", id: o.actor },
          canonicalGeneration: generation,
          ...(o.causedBy !== undefined ? { causedBy: o.causedBy } : {}),
          now: deps.now(),
          payload: { candidateId: c.id, canonicalGeneration: generation },
        }),
      ],
    },
    deps,
  );
}
