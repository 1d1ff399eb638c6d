import type { AgentInbox, AgentNotice, AgentTools } from "@rhumbatron/core";
import { pendingWakes, receiveWake, type WakeReceipt } from "@rhumbatron/db";
import type { WorkerContext } from "../context.ts";

/**
 * Wakes reaching a running Agent (docs/agents.md, Intents, claims and challenges). While its run works,
 * the Agent takes the wakes queued for its Task (at the start, then on every watch tick), checks
 * each against the state now and the files it has edited so far (receiveWake), and goes on or stops
 * handling it with the reason recorded on the woken run. A wake that still matters is put in the
 * Agent's inbox, which a provider that can re-plan reads between its steps. Taking a wake never
 * sends one, so a wake cannot cause another for the same cause.
 */
export interface WakeDelivery {
  /** The Agent's tools, recording which files it writes or deletes. */
  tools(inner: AgentTools): AgentTools;
  inbox: AgentInbox;
  /** Takes and checks the waiting wakes; a call while one is in flight joins it. */
  poll(): Promise<void>;
  received: WakeReceipt[];
}

export function wakeDelivery(
  deps: Pick<WorkerContext, "db" | "config" | "nudger" | "now">,
  run: { changeId: string; taskId: string },
  log?: (receipt: WakeReceipt) => void,
): WakeDelivery {
  const edited = new Set<string>();
  const notices: AgentNotice[] = [];
  const received: WakeReceipt[] = [];
  let inFlight: Promise<void> | null = null;
  const norm = (path: string) => path.replace(/^\.\//, "");

  async function deliver() {
    for (const runId of await pendingWakes(deps.db, run)) {
      const r = await receiveWake(deps.db, { runId, editedPaths: [...edited] }, deps);
      if (!r) continue;
      received.push(r);
      log?.(r);
      if (!r.stale) notices.push({ reason: r.reason, paths: r.paths, note: r.note });
    }
  }

  return {
    received,
    inbox: { take: () => notices.splice(0) },
    tools: (inner) => ({
      ...inner,
      async writeFile(path, content) {
        await inner.writeFile(path, content);
        edited.add(norm(path));
      },
      async deleteFile(path) {
        await inner.deleteFile(path);
        edited.add(norm(path));
      },
    }),
    poll() {
      inFlight ??= deliver().finally(() => {
        inFlight = null;
      });
      return inFlight;
    },
  };
}
