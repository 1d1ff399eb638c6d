import { DomainError } from "@rhumbatron/core";
import type { RunTrigger, WorkerFunction } from "../functions/types.ts";
import type { RunRecord } from "./run.ts";

type Waiter = { resolve(record: RunRecord): void; reject(err: unknown): void };
interface Slot {
  /** The one follow-up run owed to everything that asked while a run was in flight. */
  next?: { trigger: RunTrigger; waiters: Waiter[] };
}

/**
 * At most one run per function and key at a time. Requests arriving during a run are folded into
 * exactly one follow-up run after it: a burst of nudges means "there is new work", and a single
 * drain after the current one sees all of it.
 */
export class SingleFlight {
  private readonly slots = new Map<string, Slot>();
  private readonly loops = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly execute: (fn: WorkerFunction, key: string, trigger: RunTrigger) => Promise<RunRecord>) {}

  /** Resolves with the record of the run that covers this request (the current one or the follow-up). */
  request(fn: WorkerFunction, key: string, trigger: RunTrigger): Promise<RunRecord> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(stopping());
      const id = `${fn.id}\u0000${key}`;
      const slot = this.slots.get(id);
      if (slot) {
        slot.next ??= { trigger, waiters: [] };
        slot.next.waiters.push({ resolve, reject });
        return;
      }
      const fresh: Slot = {};
      this.slots.set(id, fresh);
      const loop = this.drive(id, fresh, fn, key, { trigger, waiters: [{ resolve, reject }] });
      this.loops.add(loop);
      void loop.finally(() => this.loops.delete(loop));
    });
  }

  /** Waits until no run is in flight (including follow-ups started meanwhile). */
  async idle(): Promise<void> {
    while (this.loops.size > 0) await Promise.all(this.loops);
  }

  /** Accepts no new requests, drops owed follow-ups (the next start catches up), waits for in-flight runs. */
  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
  }

  private async drive(id: string, slot: Slot, fn: WorkerFunction, key: string, first: Slot["next"]): Promise<void> {
    let current = first;
    while (current) {
      const record = await this.execute(fn, key, current.trigger);
      for (const w of current.waiters) w.resolve(record);
      current = slot.next;
      slot.next = undefined;
      if (current && this.closed) {
        for (const w of current.waiters) w.reject(stopping());
        current = undefined;
      }
    }
    this.slots.delete(id);
  }
}

function stopping(): DomainError {
  return new DomainError("UNAVAILABLE", "the worker is stopping");
}
