import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { rm, symlink } from "node:fs/promises";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BlobStore,
  type BrowserStep,
  CHROMIUM_INSTALL_HINT,
  type CommandResult,
  findChromium,
  type SandboxWorkspace,
} from "@rhumbatron/core";
import type { Browser, BrowserContext, Page, Request, Route } from "playwright-core";
import { sharedWarmBrowser, type WarmBrowser } from "./warm-browser.ts";

/**
 * The browser verification check: Chromium drives the steps a project's checks file gives
 * (checks-file.ts, `procedure: browser`) against the Candidate's composed app. The app is untrusted, so it runs in the Sandbox and listens on a
 * Unix socket in its workspace; the preview host has no public URL and every request to it is
 * answered over that socket by request interception. Any other request is blocked and counted.
 */
export interface BrowserCheckInput {
  /** Holds the composed tree as the check that prepares it left it. */
  workspace: SandboxWorkspace;
  /** Starts the app; it listens on the Unix socket named in LISTEN_PATH. */
  start: string[];
  /** What to do on the page, in order. */
  steps: BrowserStep[];
  /** Programs `start` may be besides the Sandbox's allowlist (the checks file's requires). */
  tools?: string[];
  blobs: BlobStore;
  /** Screenshots go to `${keyPrefix}/<name>.png`. */
  keyPrefix: string;
  /** The whole session: starting the app, Chromium and the flow (config browser.sessionMaxSeconds). */
  sessionMaxMs: number;
  chromiumPath?: string;
  /** The warm Chromium the session opens its context in; default: the worker's one (sharedWarmBrowser). */
  browser?: WarmBrowser;
  /** How long the shared warm Chromium may sit idle before it is closed (config browser.warmIdleSeconds). */
  warmIdleMs?: number;
}

export interface BrowserCheckResult {
  status: "pass" | "fail" | "error";
  coverage: "not_checked" | "checked_no_signal" | "checked_supported";
  detail: string;
  durationMs: number;
  blockedRequests: number;
  blockedHosts: string[];
  /** Blob keys. */
  screenshots: string[];
  log: string;
}

export const PREVIEW_ORIGIN = "http://preview.rhumbatron.invalid";
const SOCKET_NAME = ".preview.sock";
/** One action of the flow waits at most this long (less when the session budget is nearly spent). */
const STEP_TIMEOUT_MS = 10_000;
/** Kept back from the budget to close the browser and stop the app. */
const CLOSE_RESERVE_MS = 2_000;
/** The sandbox kills the app anyway this long after the session should have ended. */
const SERVER_SLACK_MS = 5_000;
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const MAX_LOG_LINES = 200;
const DROPPED_RESPONSE_HEADERS = new Set(["connection", "keep-alive", "transfer-encoding", "content-length"]);

type Outcome = Pick<BrowserCheckResult, "status" | "coverage" | "detail">;

export const error = (detail: string): Outcome => ({ status: "error", coverage: "not_checked", detail });
const firstLine = (e: unknown) => (e instanceof Error ? e.message : String(e)).split("\n")[0] ?? "";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One browser check: the session (the app, Chromium, the flow) under its budget, then whatever was
 * started is closed, the app's output logged and the screenshots stored, whatever happened.
 */
export async function runBrowserCheck(input: BrowserCheckInput): Promise<BrowserCheckResult> {
  const s = newSession(input);
  let outcome: Outcome;
  let ended: CommandResult | Error | null = null;
  try {
    outcome = await runSession(s);
  } catch (e) {
    outcome = error(`browser session failed: ${firstLine(e)}`);
  } finally {
    ended = await closeSession(s);
  }
  logAppOutput(s, ended);
  const screenshots = await storeScreenshots(s);
  return checkResult(s, outcome, screenshots);
}

/** What one check holds while it runs: its clock, its log and counters, and what it started. */
interface CheckSession {
  input: BrowserCheckInput;
  started: number;
  /** Milliseconds left of the session budget, less what closing needs. */
  left: () => number;
  lines: string[];
  log: (line: string) => void;
  blocked: { count: number; hosts: Set<string> };
  shots: { name: string; png: Buffer }[];
  /** A short path to the app's socket (socket paths are limited to ~107 bytes). */
  link: string;
  stop: AbortController;
  /** Set by the session as it starts them; closeSession closes whatever was started. */
  server: Promise<CommandResult | Error> | null;
  /** The session's own context in the warm browser (the browser itself stays up for the next check). */
  context: BrowserContext | null;
  /** Set once the session holds the warm browser; closeSession lets go of it. */
  release: (() => void) | null;
}

function newSession(input: BrowserCheckInput): CheckSession {
  const started = performance.now();
  const lines: string[] = [];
  return {
    input,
    started,
    left: () => input.sessionMaxMs - (performance.now() - started) - CLOSE_RESERVE_MS,
    lines,
    log: (line) => void lines.push(line.length > 500 ? `${line.slice(0, 500)}…` : line),
    blocked: { count: 0, hosts: new Set<string>() },
    shots: [],
    link: join(tmpdir(), `rb-${randomBytes(6).toString("hex")}.sock`),
    stop: new AbortController(),
    server: null,
    context: null,
    release: null,
  };
}

const BUDGET_SPENT = "the session budget ran out before the flow ran";

/** Chromium found, the app up on its socket, a guarded page, then the flow in what is left of the budget. */
async function runSession(s: CheckSession): Promise<Outcome> {
  const executablePath = s.input.chromiumPath ?? findChromium(process.env, existsSync);
  if (!executablePath || !existsSync(executablePath)) return error(CHROMIUM_INSTALL_HINT);
  const notUp = await startApp(s);
  if (notUp) return error(`the app did not start: ${notUp}`);
  const warm = s.input.browser ?? sharedWarmBrowser(s.input.warmIdleMs);
  let browser: Browser;
  try {
    const held = await warm.acquire(executablePath, Math.max(1, s.left()));
    s.release = held.release;
    browser = held.browser;
  } catch (e) {
    // A launch that was given only what was left of the budget and timed out: the budget ran out.
    if (s.left() <= 0) return error(BUDGET_SPENT);
    return error(`could not launch Chromium: ${firstLine(e)}`);
  }
  const page = await openGuardedPage(s, browser);
  // Less than one full step left: our slowness, not the Candidate's page, would decide the result.
  if (s.left() < STEP_TIMEOUT_MS) return error(BUDGET_SPENT);
  return runSteps(page, s.input.steps, s.left, s.shots);
}

/** Starts the built app in the Sandbox on its socket; null once it accepts connections, else why not. */
async function startApp(s: CheckSession): Promise<string | null> {
  const ws = s.input.workspace;
  await rm(join(ws.path, SOCKET_NAME), { force: true }); // a previous session's socket
  await symlink(join(ws.path, SOCKET_NAME), s.link);
  s.server = ws
    .run({
      argv: s.input.start,
      ...(s.input.tools ? { allow: s.input.tools } : {}),
      env: { LISTEN_PATH: SOCKET_NAME },
      timeoutMs: s.input.sessionMaxMs + SERVER_SLACK_MS,
      signal: s.stop.signal,
    })
    .catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
  return waitForApp(s.link, s.server, s.left);
}

/** A page whose every request goes to the app's socket or is blocked and counted, its errors logged. */
async function openGuardedPage(s: CheckSession, browser: Browser): Promise<Page> {
  const context = await browser.newContext({ serviceWorkers: "block" });
  s.context = context;
  await context.route("**/*", (r) => routeRequest(s, r));
  await context.routeWebSocket(
    () => true,
    (socket) => {
      const host = new URL(socket.url()).hostname;
      if (host !== new URL(PREVIEW_ORIGIN).hostname) {
        s.blocked.count++;
        s.blocked.hosts.add(host);
      }
      s.log(`blocked: websocket ${socket.url()}`);
      void socket.close({ code: 1008, reason: "blocked by the browser check" }).catch(() => {});
    },
  );
  const page = await context.newPage();
  page.on("pageerror", (e) => s.log(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") s.log(`console.error: ${m.text()}`);
  });
  return page;
}

/** A request to the preview host is answered over the app's socket; any other is blocked and counted. */
async function routeRequest(s: CheckSession, r: Route) {
  const req = r.request();
  const url = new URL(req.url());
  if (url.origin !== PREVIEW_ORIGIN) {
    s.blocked.count++;
    s.blocked.hosts.add(url.hostname || url.protocol);
    s.log(`blocked: ${req.method()} ${req.url()}`);
    return r.abort("blockedbyclient").catch(() => {});
  }
  try {
    await r.fulfill(await forward(s.link, req, Math.max(1_000, s.left())));
  } catch (e) {
    s.log(`preview request failed: ${req.method()} ${url.pathname}: ${firstLine(e)}`);
    await r.abort("connectionrefused").catch(() => {});
  }
}

/** Closes the session's context (the warm browser stays), stops the app (returning how it ended) and removes its socket and link. */
async function closeSession(s: CheckSession): Promise<CommandResult | Error | null> {
  await s.context?.close().catch(() => {});
  s.release?.();
  s.stop.abort();
  const ended = s.server ? await s.server : null;
  await rm(s.link, { force: true }).catch(() => {});
  await rm(join(s.input.workspace.path, SOCKET_NAME), { force: true }).catch(() => {});
  return ended;
}

function logAppOutput(s: CheckSession, ended: CommandResult | Error | null) {
  if (!ended || ended instanceof Error) return;
  for (const [name, text] of [
    ["app stdout", ended.stdout],
    ["app stderr", ended.stderr],
  ] as const) {
    if (text.trim()) s.log(`${name}: ${text.trim().slice(-2_000)}`);
  }
}

/** Stores the screenshots as blobs; one that cannot be stored is logged and left out. */
async function storeScreenshots(s: CheckSession): Promise<string[]> {
  const keys: string[] = [];
  for (const shot of s.shots) {
    const key = `${s.input.keyPrefix}/${shot.name}.png`;
    try {
      await s.input.blobs.put(key, new Uint8Array(shot.png), { "content-type": "image/png" });
      keys.push(key);
    } catch (e) {
      s.log(`could not store screenshot ${key}: ${firstLine(e)}`);
    }
  }
  return keys;
}

function checkResult(s: CheckSession, outcome: Outcome, screenshots: string[]): BrowserCheckResult {
  const more = s.lines.length - MAX_LOG_LINES;
  return {
    ...outcome,
    durationMs: Math.round(performance.now() - s.started),
    blockedRequests: s.blocked.count,
    blockedHosts: [...s.blocked.hosts].sort(),
    screenshots,
    log: [...s.lines.slice(0, MAX_LOG_LINES), ...(more > 0 ? [`… ${more} more lines`] : [])].join("\n"),
  };
}

/** A step's target: a data-testid, or a CSS selector after `css=`. */
const target = (page: Page, what: string) =>
  what.startsWith("css=") ? page.locator(what.slice(4)) : page.getByTestId(what);

/** How a step is named in the detail and the log: `click save-button`. */
export function describeStep(step: BrowserStep): string {
  const [verb, value] = Object.entries(step)[0] ?? ["?", ""];
  return `${verb} ${value}`;
}

/** The project's steps, each within the step timeout and what is left of the session; a final screenshot. */
async function runSteps(
  page: Page,
  steps: readonly BrowserStep[],
  left: () => number,
  shots: { name: string; png: Buffer }[],
): Promise<Outcome> {
  const shoot = (name: string) => async (timeout: number) =>
    void shots.push({ name, png: await page.screenshot({ type: "png", fullPage: true, timeout }) });
  const act = (step: BrowserStep): ((timeout: number) => Promise<unknown>) => {
    if ("goto" in step) return (timeout) => page.goto(`${PREVIEW_ORIGIN}${step.goto}`, { timeout });
    if ("click" in step) return (timeout) => target(page, step.click).first().click({ timeout });
    if ("see" in step) return (timeout) => target(page, step.see).first().waitFor({ state: "visible", timeout });
    if ("gone" in step) return (timeout) => target(page, step.gone).first().waitFor({ state: "hidden", timeout });
    return shoot(step.screenshot);
  };
  for (const [i, step] of steps.entries()) {
    const timeout = Math.min(STEP_TIMEOUT_MS, left());
    try {
      if (timeout <= 0) throw new Error("the session budget ran out");
      await act(step)(timeout);
    } catch (e) {
      await shoot("failure")(Math.max(1, Math.min(2_000, left() + CLOSE_RESERVE_MS / 2))).catch(() => {});
      return {
        status: "fail",
        coverage: "checked_supported",
        detail: `step ${i + 1} of ${steps.length} failed, "${describeStep(step)}": ${firstLine(e)}`,
      };
    }
  }
  await shoot("final")(Math.max(1, Math.min(STEP_TIMEOUT_MS, left()))).catch(() => {});
  return { status: "pass", coverage: "checked_supported", detail: `all ${steps.length} steps passed` };
}

/** Polls the app's socket (through the short link) until it accepts a connection; null once it does. */
async function waitForApp(link: string, server: Promise<CommandResult | Error>, left: () => number) {
  let exited: CommandResult | Error | null = null;
  void server.then((r) => {
    exited = r;
  });
  for (;;) {
    if (await canConnect(link)) return null;
    const gone = exited as CommandResult | Error | null;
    if (gone instanceof Error) return gone.message;
    if (gone) return `it exited (code ${gone.exitCode}, signal ${gone.signal}): ${gone.stderr.trim().slice(-1_000)}`;
    if (left() <= 0) return "no socket within the session budget";
    await sleep(100);
  }
}

function canConnect(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Sends one intercepted request to the app over its Unix socket and reads the whole answer. */
async function forward(socketPath: string, req: Request, timeoutMs: number) {
  const url = new URL(req.url());
  const headers = Object.fromEntries(Object.entries(await req.allHeaders()).filter(([k]) => !k.startsWith(":")));
  return new Promise<{ status: number; headers: Record<string, string>; body: Buffer }>((resolve, reject) => {
    const out = httpRequest(
      {
        socketPath,
        agent: false,
        method: req.method(),
        path: url.pathname + url.search,
        headers: { ...headers, host: url.host },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) res.destroy(new Error(`response over ${MAX_RESPONSE_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on("error", reject);
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 502,
            headers: responseHeaders(res.headers),
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    out.setTimeout(timeoutMs, () => out.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    out.on("error", reject);
    out.end(req.postDataBuffer() ?? undefined);
  });
}

function responseHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || DROPPED_RESPONSE_HEADERS.has(name)) continue;
    kept[name] = Array.isArray(value) ? value.join(name === "set-cookie" ? "\n" : ", ") : value;
  }
  return kept;
}
