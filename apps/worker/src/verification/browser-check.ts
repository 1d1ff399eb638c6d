import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { rm, symlink } from "node:fs/promises";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BlobStore,
  BROWSER_CHECK_ARGS,
  CHROMIUM_INSTALL_HINT,
  type CommandResult,
  findChromium,
  type SandboxWorkspace,
} from "@rhumbatron/core";
import { type Browser, chromium, type Page, type Request, type Route } from "playwright-core";

/**
 * The browser verification check: Chromium drives the demo shop's wishlist (or cart) flow against
 * the Candidate's composed app. The app is untrusted, so it runs in the Sandbox and listens on a
 * Unix socket in its workspace; the preview host has no public URL and every request to it is
 * answered over that socket by request interception. Any other request is blocked and counted.
 */
export interface BrowserCheckInput {
  /** Holds the composed tree, already built (`dist/` exists). */
  workspace: SandboxWorkspace;
  blobs: BlobStore;
  /** Screenshots go to `${keyPrefix}/<name>.png`. */
  keyPrefix: string;
  /** The whole session: starting the app, Chromium and the flow (config browser.sessionMaxSeconds). */
  sessionMaxMs: number;
  flow?: "wishlist" | "cart";
  chromiumPath?: string;
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
type Step = [name: string, act: (timeoutMs: number) => Promise<unknown>];

const error = (detail: string): Outcome => ({ status: "error", coverage: "not_checked", detail });
const firstLine = (e: unknown) => (e instanceof Error ? e.message : String(e)).split("\n")[0] ?? "";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runBrowserCheck(input: BrowserCheckInput): Promise<BrowserCheckResult> {
  const started = performance.now();
  const left = () => input.sessionMaxMs - (performance.now() - started) - CLOSE_RESERVE_MS;
  const lines: string[] = [];
  const log = (line: string) => void lines.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
  const blocked = { count: 0, hosts: new Set<string>() };
  const shots: { name: string; png: Buffer }[] = [];
  const ws = input.workspace;
  const link = join(tmpdir(), `rb-${randomBytes(6).toString("hex")}.sock`);
  const stop = new AbortController();
  // Set inside session(); the finally block closes whatever was started.
  const running: { server: Promise<CommandResult | Error> | null; browser: Browser | null } = {
    server: null,
    browser: null,
  };

  async function route(r: Route) {
    const req = r.request();
    const url = new URL(req.url());
    if (url.origin !== PREVIEW_ORIGIN) {
      blocked.count++;
      blocked.hosts.add(url.hostname || url.protocol);
      log(`blocked: ${req.method()} ${req.url()}`);
      return r.abort("blockedbyclient").catch(() => {});
    }
    try {
      await r.fulfill(await forward(link, req, Math.max(1_000, left())));
    } catch (e) {
      log(`preview request failed: ${req.method()} ${url.pathname}: ${firstLine(e)}`);
      await r.abort("connectionrefused").catch(() => {});
    }
  }

  async function session(): Promise<Outcome> {
    const executablePath = input.chromiumPath ?? findChromium(process.env, existsSync);
    if (!executablePath || !existsSync(executablePath)) return error(CHROMIUM_INSTALL_HINT);
    await rm(join(ws.path, SOCKET_NAME), { force: true }); // a previous session's socket
    await symlink(join(ws.path, SOCKET_NAME), link); // socket paths are limited to ~107 bytes
    const server = ws
      .run({
        argv: ["node", "dist/src/server.js"],
        env: { LISTEN_PATH: SOCKET_NAME },
        timeoutMs: input.sessionMaxMs + SERVER_SLACK_MS,
        signal: stop.signal,
      })
      .catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    running.server = server;
    const notUp = await waitForApp(link, server, left);
    if (notUp) return error(`the app did not start: ${notUp}`);
    try {
      running.browser = await chromium.launch({
        executablePath,
        args: BROWSER_CHECK_ARGS,
        timeout: Math.max(1, left()),
      });
    } catch (e) {
      return error(`could not launch Chromium: ${firstLine(e)}`);
    }
    const context = await running.browser.newContext({ serviceWorkers: "block" });
    await context.route("**/*", route);
    await context.routeWebSocket(
      () => true,
      (socket) => {
        const host = new URL(socket.url()).hostname;
        if (host !== new URL(PREVIEW_ORIGIN).hostname) {
          blocked.count++;
          blocked.hosts.add(host);
        }
        log(`blocked: websocket ${socket.url()}`);
        void socket.close({ code: 1008, reason: "blocked by the browser check" }).catch(() => {});
      },
    );
    const page = await context.newPage();
    page.on("pageerror", (e) => log(`pageerror: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") log(`console.error: ${m.text()}`);
    });
    // Less than one full step left: our slowness, not the Candidate's page, would decide the result.
    if (left() < STEP_TIMEOUT_MS) return error("the session budget ran out before the flow ran");
    return runFlow(page, input.flow ?? "wishlist", left, shots);
  }

  let outcome: Outcome;
  let ended: CommandResult | Error | null = null;
  try {
    outcome = await session();
  } catch (e) {
    outcome = error(`browser session failed: ${firstLine(e)}`);
  } finally {
    await running.browser?.close().catch(() => {});
    stop.abort();
    ended = running.server ? await running.server : null;
    await rm(link, { force: true }).catch(() => {});
    await rm(join(ws.path, SOCKET_NAME), { force: true }).catch(() => {});
  }
  if (ended && !(ended instanceof Error)) {
    for (const [name, text] of [
      ["app stdout", ended.stdout],
      ["app stderr", ended.stderr],
    ] as const) {
      if (text.trim()) log(`${name}: ${text.trim().slice(-2_000)}`);
    }
  }

  const screenshots: string[] = [];
  for (const shot of shots) {
    const key = `${input.keyPrefix}/${shot.name}.png`;
    try {
      await input.blobs.put(key, new Uint8Array(shot.png), { "content-type": "image/png" });
      screenshots.push(key);
    } catch (e) {
      log(`could not store screenshot ${key}: ${firstLine(e)}`);
    }
  }
  const more = lines.length - MAX_LOG_LINES;
  return {
    ...outcome,
    durationMs: Math.round(performance.now() - started),
    blockedRequests: blocked.count,
    blockedHosts: [...blocked.hosts].sort(),
    screenshots,
    log: [...lines.slice(0, MAX_LOG_LINES), ...(more > 0 ? [`… ${more} more lines`] : [])].join("\n"),
  };
}

/** The demo shop's flow through its data-testid hooks (templates/shop/README.md, "The page"). */
async function runFlow(
  page: Page,
  flow: "wishlist" | "cart",
  left: () => number,
  shots: { name: string; png: Buffer }[],
): Promise<Outcome> {
  const byId = (id: string) => page.getByTestId(id);
  const shoot = (name: string) => async (timeout: number) =>
    shots.push({ name, png: await page.screenshot({ type: "png", fullPage: true, timeout }) });
  const see = (id: string) => (timeout: number) => byId(id).waitFor({ state: "visible", timeout });
  const click = (id: string) => (timeout: number) => byId(id).click({ timeout });
  const steps: Step[] = [
    ["open /", (timeout) => page.goto(`${PREVIEW_ORIGIN}/`, { timeout })],
    ["first render", (timeout) => page.locator('body[data-ready="true"]').waitFor({ state: "attached", timeout })],
    ["screenshot loaded", shoot("loaded")],
    ...(flow === "wishlist"
      ? ([
          ["click add-to-wishlist-mug", click("add-to-wishlist-mug")],
          ["see wishlist-item-mug", see("wishlist-item-mug")],
          ["click move-to-cart-mug", click("move-to-cart-mug")],
          ["see cart-item-mug", see("cart-item-mug")],
          ["wishlist-item-mug gone", (timeout) => byId("wishlist-item-mug").waitFor({ state: "hidden", timeout })],
        ] satisfies Step[])
      : ([
          ["click add-to-cart-mug", click("add-to-cart-mug")],
          ["see cart-item-mug", see("cart-item-mug")],
        ] satisfies Step[])),
    ["see cart-total", (timeout) => page.locator('[data-testid="cart-total"]:not(:empty)').waitFor({ timeout })],
    ["screenshot final", shoot("final")],
  ];
  for (const [name, act] of steps) {
    const timeout = Math.min(STEP_TIMEOUT_MS, left());
    try {
      if (timeout <= 0) throw new Error("the session budget ran out");
      await act(timeout);
    } catch (e) {
      await shoot("failure")(Math.max(1, Math.min(2_000, left() + CLOSE_RESERVE_MS / 2))).catch(() => {});
      return {
        status: "fail",
        coverage: "checked_supported",
        detail: `${flow} flow failed at "${name}": ${firstLine(e)}`,
      };
    }
  }
  const total = await byId("cart-total")
    .textContent({ timeout: 1_000 })
    .catch(() => null);
  return { status: "pass", coverage: "checked_supported", detail: `${flow} flow passed; cart total ${total?.trim()}` };
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
