import { candidateFork, DomainError, type HandlerResult } from "@rhumbatron/core";
import { landCandidate, type SourceProbe, withRepoToken } from "@rhumbatron/db";
import type { CommandHandler } from "@rhumbatron/runtime";
import type { SourceHandlerDeps } from "../source/handlers.ts";

/** Promotion's P6 (docs/protocol.md, Promotion) from the worker: the composed commit is in the Candidate's fork. */
export function storeSourceProbe(deps: SourceHandlerDeps): SourceProbe {
  return {
    commitInCandidateFork(candidateId, commit) {
      const fork = candidateFork(candidateId);
      return withRepoToken(
        deps.db,
        { repo: fork, mode: "read", purpose: "landing check" },
        deps.config,
        deps.now,
        (t) => deps.source.hasCommit(fork, t, commit),
      );
    },
  };
}

/**
 * candidate.land (integration queue, docs/landing.md): promotes a ready Candidate of a Change that
 * lands when ready. The queue hands out one message at a time, oldest first, so promotions of a
 * project land one by one in the order they became ready. Not ready, or no longer the newest
 * Candidate: nothing to do (the next Event that moves it sends the command again). Stale: the
 * promotion marks it so and recomposition takes over.
 */
export function landHandler(deps: SourceHandlerDeps): CommandHandler {
  const probe = storeSourceProbe(deps);
  return {
    commandTypes: ["candidate.land"],
    // Promotion runs its own transactions (project row, then release and index commands) and probes
    // git, so it runs before the ack's transaction opens.
    async prepare({ command }) {
      const candidateId = (command.payload as { candidateId?: unknown }).candidateId;
      if (!command.changeId || typeof candidateId !== "string") {
        throw new DomainError("INVALID_INPUT", "candidate.land needs a changeId and a candidateId");
      }
      await landCandidate(deps.db, { changeId: command.changeId, candidateId }, deps, probe);
    },
    handle: async (): Promise<HandlerResult> => "done",
  };
}
