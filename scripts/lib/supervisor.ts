import type { ExitReason, Managed } from "./processes.ts";
import { signalGroup, stopProcess } from "./processes.ts";
import {
  decideRestart,
  describeExit,
  giveUpLine,
  NO_RESTARTS,
  RESTART_POLICY,
  type RestartHistory,
  type RestartPolicy,
} from "./restart-policy.ts";

/**
 * Keeps `npm start`'s web and worker processes running: a crashed one is restarted after a backoff
 * (scripts/lib/restart-policy.ts); past the restart limit, or when a process exits cleanly on its own
 * (exit code 0: it chose to stop), the supervisor gives up and its owner stops everything.
 *
 * Written here rather than taken from npm: forever-monitor (the maintained-looking option) pulls in
 * chokidar 2 and async 1 and has no rolling restart window; respawn and pm2 either lack the window or
 * bring a daemon of their own. This needs ~100 lines on top of processes.ts and is tested with real
 * processes (supervisor.test.ts).
 */
export interface SupervisedProcess {
  name: string;
  /** Starts (or starts again) the process; called once at first and once per restart. */
  start: () => Managed;
}

export interface RestartEvent {
  name: string;
  reason: ExitReason;
  delayMs: number;
  restartsInWindow: number;
}

export interface SupervisorOptions {
  policy?: RestartPolicy;
  /** The clock the restart policy reads (tests pass their own). */
  now?: () => number;
  /** SIGTERM -> SIGKILL grace period for each process on stop(). */
  graceMs?: number;
  /** A process crashed and will be restarted after `delayMs`. */
  onRestarting?: (e: RestartEvent) => void;
  /** A crashed process was started again. */
  onRestarted?: (e: { name: string; pid: number | undefined }) => void;
}

interface Slot {
  spec: SupervisedProcess;
  current: Managed;
  startedAt: number;
  history: RestartHistory;
  timer?: NodeJS.Timeout;
}

export class Supervisor {
  /** Resolves, once, with why the supervisor stopped restarting; it never resolves after stop(). */
  readonly gaveUp: Promise<string>;
  private resolveGaveUp: (why: string) => void = () => {};
  private readonly slots: Slot[];
  private readonly policy: RestartPolicy;
  private readonly now: () => number;
  private stopping = false;
  private done = false;

  constructor(
    specs: SupervisedProcess[],
    private readonly options: SupervisorOptions = {},
  ) {
    this.policy = options.policy ?? RESTART_POLICY;
    this.now = options.now ?? Date.now;
    this.gaveUp = new Promise((resolve) => {
      this.resolveGaveUp = resolve;
    });
    this.slots = specs.map((spec) => {
      const slot = { spec, history: NO_RESTARTS } as Slot;
      this.launch(slot);
      return slot;
    });
  }

  /** The process running now under that name (a restart replaces it). */
  current(name: string): Managed | undefined {
    return this.slots.find((s) => s.spec.name === name)?.current;
  }

  /** Stops every process (SIGTERM, then SIGKILL after the grace period); nothing is restarted after this. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const slot of this.slots) clearTimeout(slot.timer);
    await Promise.all(this.slots.map((slot) => stopProcess(slot.current, this.options.graceMs)));
  }

  private launch(slot: Slot): void {
    const managed = slot.spec.start();
    slot.current = managed;
    slot.startedAt = this.now();
    void managed.exit.then((reason) => this.exited(slot, managed, reason));
  }

  private exited(slot: Slot, managed: Managed, reason: ExitReason): void {
    if (this.stopping || this.done || slot.current !== managed) return;
    // What the process started is not needed any more (tsx runs the worker in a child of its own).
    if (managed.child.pid !== undefined) signalGroup(managed.child.pid, "SIGKILL");
    const { name } = slot.spec;
    if (reason.code === 0 && !reason.error) {
      this.giveUp(`${name} exited on its own (${describeExit(reason)})`);
      return;
    }
    const at = this.now();
    const decision = decideRestart(slot.history, { at, ranForMs: at - slot.startedAt }, this.policy);
    if (!decision.restart) {
      this.giveUp(giveUpLine(name, reason, this.policy));
      return;
    }
    slot.history = decision.history;
    this.options.onRestarting?.({
      name,
      reason,
      delayMs: decision.delayMs,
      restartsInWindow: decision.restartsInWindow,
    });
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      if (this.stopping || this.done) return;
      this.launch(slot);
      this.options.onRestarted?.({ name, pid: slot.current.child.pid });
    }, decision.delayMs);
  }

  private giveUp(why: string): void {
    this.done = true;
    for (const slot of this.slots) clearTimeout(slot.timer);
    this.resolveGaveUp(why);
  }
}
