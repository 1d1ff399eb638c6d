import { BROWSER_CHECK_ARGS } from "@rhumbatron/core";
import { type Browser, chromium } from "playwright-core";

// One Chromium kept warm between browser checks (browser-check.ts), closed when idle or with the worker.

/**
 * One Chromium kept warm for browser checks: launched by the first check, reused by the next ones
 * (each in a fresh context of its own, closed when the check ends: no cookie, storage or route of
 * one check reaches another), closed once no check has used it for `idleMs`, and by `close` when
 * the worker stops. A browser whose process died (crashed, killed) is launched again by the next
 * check; a check that was using it when it died ends in error, never in a pass.
 */
export interface WarmBrowser {
  /** The running browser (launched or relaunched when needed) and how to let go of it. */
  acquire(executablePath: string, launchTimeoutMs: number): Promise<{ browser: Browser; release: () => void }>;
  /** Closes the browser if it runs; the next acquire launches a new one. */
  close(): Promise<void>;
  /** How many times a browser was launched (the first one and every relaunch). */
  readonly launches: number;
  /** The running browser, if any (tests: to kill its process). */
  readonly current: Browser | null;
}

export function warmBrowser(o: {
  /** Idle time before the browser is closed; 0 closes it as soon as no check uses it. */
  idleMs: number;
  launch?: (executablePath: string, timeoutMs: number) => Promise<Browser>;
}): WarmBrowser & { idleMs: number } {
  const launch =
    o.launch ?? ((executablePath, timeout) => chromium.launch({ executablePath, args: BROWSER_CHECK_ARGS, timeout }));
  let browser: Browser | null = null;
  let launching: Promise<Browser> | null = null;
  let users = 0;
  let launches = 0;
  let idle: ReturnType<typeof setTimeout> | null = null;
  const stopIdle = () => {
    if (idle) clearTimeout(idle);
    idle = null;
  };
  const up = (executablePath: string, timeoutMs: number): Promise<Browser> => {
    if (browser?.isConnected()) return Promise.resolve(browser);
    browser = null;
    launching ??= (async () => {
      try {
        await null; // `launching` is set before anything below can end it
        launches++;
        const b = await launch(executablePath, timeoutMs);
        // A crashed or killed browser: forgotten at once, so the next check launches a new one.
        b.on("disconnected", () => {
          if (browser === b) browser = null;
        });
        browser = b;
        return b;
      } finally {
        launching = null;
      }
    })();
    return launching;
  };
  const w = {
    idleMs: o.idleMs,
    async acquire(executablePath: string, launchTimeoutMs: number) {
      stopIdle();
      users++;
      let b: Browser;
      try {
        b = await up(executablePath, launchTimeoutMs);
      } catch (e) {
        users--;
        throw e;
      }
      let released = false;
      return {
        browser: b,
        release: () => {
          if (released) return;
          released = true;
          if (--users > 0) return;
          stopIdle();
          idle = setTimeout(() => void w.close(), w.idleMs);
          idle.unref();
        },
      };
    },
    async close() {
      stopIdle();
      const b = browser ?? (await launching?.catch(() => null)) ?? null;
      browser = null;
      await b?.close().catch(() => {});
    },
    get launches() {
      return launches;
    },
    get current() {
      return browser;
    },
  };
  return w;
}

let shared: (WarmBrowser & { idleMs: number }) | null = null;

/**
 * The worker's one warm browser, created on first use. `idleMs` (config browser.warmIdleSeconds,
 * passed by the verification workflow) sets how long it stays up without a check; without it, it
 * is closed as soon as no check uses it.
 */
export function sharedWarmBrowser(idleMs = 0): WarmBrowser {
  shared ??= warmBrowser({ idleMs });
  shared.idleMs = idleMs;
  return shared;
}

/** Closes the worker's warm browser, if one runs: call it when the worker stops. */
export async function closeWarmBrowser(): Promise<void> {
  await shared?.close();
}
