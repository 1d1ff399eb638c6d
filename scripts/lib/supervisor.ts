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
 * Keeps `npm start`'s web and worker processes, and its embedded Postgres, running: a crashed one is
 * restarted after a backoff (scripts/lib/restart-policy.ts); past the restart limit, or when a
 * process exits cleanly on its own (exit code 0: it chose to stop), the supervisor gives up and its
 * owner stops everything.
 *
 * Written here rather than taken from npm: forever-monitor (the maintained-looking option) pulls in
 * chokidar 2 and async 1 and has no rolling restart window; respawn and pm2 either lack the window or
 * bring a daemon of their own. This needs ~100 lines on top of processes.ts and is tested with real
 * processes (supervisor.test.ts).
 */
export interface SupervisedProcess {
  name: string;
  /**
   * Starts (or starts again) the process; called once at first and once per restart. A start that
   * takes a while (the embedded Postgres) returns a promise: its rejection counts as a crash, and
   * null means there is nothing of ours to watch any more (the supervisor leaves that slot alone).
   */
  start: () => Managed | Promise<Managed | null>;
  /** Stops it; default: SIGTERM to its process group, SIGKILL after the grace period (stopProcess). */
  stop?: (p: Managed) => Promise<void>;
  /**
   * A clean exit (code 0) is restarted like a crash instead of ending supervision: a Postgres exits 0
   * when someone else stops it (a fast shutdown), and nothing works without it.
   */
  restartCleanExit?: boolean;
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
  current?: Managed;
  /** A start in progress (an asynchronous one). */
  starting?: Promise<void>;
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
    // A start in progress finishes first, so what it started is stopped too.
    await Promise.all(this.slots.map((slot) => slot.starting));
    await Promise.all(
      this.slots.map(({ spec, current }) =>
        !current ? undefined : spec.stop ? spec.stop(current) : stopProcess(current, this.options.graceMs),
      ),
    );
  }

  /** Starts the slot's process; the caller says whether this is a restart (onRestarted). */
  private launch(slot: Slot, restart = false): void {
    slot.startedAt = this.now();
    const started = slot.spec.start();
    if (!(started instanceof Promise)) {
      this.watch(slot, started, restart);
      return;
    }
    const starting: Promise<void> = started
      .then(
        (managed) => {
          if (managed) this.watch(slot, managed, restart);
        },
        (err: unknown) => {
          const error = err instanceof Error && err.message ? err.message : String(err);
          this.exited(slot, undefined, { code: 1, signal: null, error });
        },
      )
      .finally(() => {
        if (slot.starting === starting) slot.starting = undefined;
      });
    slot.starting = starting;
  }

  private watch(slot: Slot, managed: Managed, restart: boolean): void {
    slot.current = managed;
    void managed.exit.then((reason) => this.exited(slot, managed, reason));
    if (restart && !this.stopping) this.options.onRestarted?.({ name: slot.spec.name, pid: managed.child.pid });
  }

  /** The slot's process exited, or (`managed` undefined) could not be started. */
  private exited(slot: Slot, managed: Managed | undefined, reason: ExitReason): void {
    if (this.stopping || this.done || slot.current !== managed) return;
    // What the process started is not needed any more (tsx runs the worker in a child of its own).
    if (managed?.child.pid !== undefined) signalGroup(managed.child.pid, "SIGKILL");
    slot.current = undefined;
    const { name } = slot.spec;
    if (reason.code === 0 && !reason.error && !slot.spec.restartCleanExit) {
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
      this.launch(slot, true);
    }, decision.delayMs);
  }

  private giveUp(why: string): void {
    this.done = true;
    for (const slot of this.slots) clearTimeout(slot.timer);
    this.resolveGaveUp(why);
  }
}
