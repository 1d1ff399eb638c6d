import { createHmac, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Tests only: a local stand-in for Inngest (Cloud or a self-hosted server) speaking its wire format
 * to our serve handlers, and a round-robin balancer to put in front of several of them.
 *
 * - Register API: `POST /fn/register` stores the app under its name; a later sync of the same app
 *   replaces it, as Inngest does.
 * - Event API: `POST /e/<key>` accepts events (the nudger sends them) and records them.
 * - Calling functions: `invoke` drives one run as Inngest's executor does, one signed POST per
 *   request to the step URL the app registered, passing back the results of the steps done so far.
 *   It does not offer the SDK's checkpointing (no internal function ID is sent), so every step's
 *   outcome comes back in a response of its own and the next request may reach another host.
 */

export interface RegisteredFunction {
  id: string;
  triggers: ({ cron: string } | { event: string })[];
  concurrency?: unknown;
  steps: Record<string, { id: string; runtime: { url: string }; retries?: { attempts: number } }>;
}
export interface Registration {
  url: string;
  appName: string;
  functions: RegisteredFunction[];
  [field: string]: unknown;
}

export interface Invocation {
  /** What the run returned (the body of the final 200). */
  output: unknown;
  /** The HTTP status of each request of the run, in order. */
  statuses: number[];
}

export interface InvokeOptions {
  /** Whether the SDK may run a step in the request that finds it (Inngest's default) or must plan it first. */
  immediate: boolean;
  /** Called after each request that left the run unfinished, before the next one. */
  between?: (requestIndex: number) => Promise<void>;
}

type StepState = Record<string, { type: "data"; data: unknown }>;
interface Op {
  id: string;
  op: string;
  data?: unknown;
  error?: unknown;
}

/** JSON with object keys sorted: the SDK checks a request's signature against this form of its body. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Inngest's request signature: HMAC-SHA256 over the body and a timestamp, keyed by the signing key without its prefix. */
export function signature(body: string, signingKey: string, at = new Date()): string {
  const ts = Math.floor(at.getTime() / 1000).toString();
  const key = signingKey.replace(/^signkey-\w+-/, "");
  return `t=${ts}&s=${createHmac("sha256", key)
    .update(body + ts)
    .digest("hex")}`;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

export interface StandInInngest {
  /** Its address: every host's INNGEST_BASE_URL. */
  url: string;
  /** The apps as Inngest holds them now, by app name. */
  apps: Map<string, Registration>;
  /** Every sync received, in order. */
  registrations: Registration[];
  /** Every event received. */
  events: { name: string; data: unknown }[];
  invoke(
    appName: string,
    functionId: string,
    event: { name: string; data: unknown },
    options: InvokeOptions,
  ): Promise<Invocation>;
  stop(): Promise<void>;
}

export async function startStandInInngest(signingKey: string): Promise<StandInInngest> {
  const apps = new Map<string, Registration>();
  const registrations: Registration[] = [];
  const events: StandInInngest["events"] = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const path = new URL(req.url ?? "/", "http://stand-in").pathname;
    const answer = (status: number, json: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
    if (req.method === "POST" && path === "/fn/register") {
      const reg = JSON.parse(body) as Registration;
      registrations.push(reg);
      apps.set(reg.appName, reg);
      return answer(200, { ok: true, modified: true });
    }
    if (req.method === "POST" && path.startsWith("/e/")) {
      const sent = JSON.parse(body) as StandInInngest["events"] | StandInInngest["events"][number];
      const list = Array.isArray(sent) ? sent : [sent];
      events.push(...list);
      return answer(200, { ids: list.map(() => randomUUID()), status: 200 });
    }
    answer(404, { error: "not found" });
  });
  const url = await listen(server);
  return {
    url,
    apps,
    registrations,
    events,
    invoke: async (appName, functionId, event, options) => {
      const fn = apps.get(appName)?.functions.find((f) => f.id === `${appName}-${functionId}`);
      if (!fn) throw new Error(`${appName} has no function ${functionId} registered`);
      return invoke(signingKey, fn, event, options);
    },
    stop: () => close(server),
  };
}

interface Run {
  runId: string;
  event: { name: string; data: unknown };
  /** The results of the steps run so far, by hashed step ID, and the order they finished in. */
  steps: StepState;
  stack: string[];
  statuses: number[];
}

/** One run of a registered function, request after request, until it returns. */
async function invoke(
  signingKey: string,
  fn: RegisteredFunction,
  event: Run["event"],
  options: InvokeOptions,
): Promise<Invocation> {
  const step = Object.values(fn.steps)[0];
  if (!step) throw new Error(`${fn.id} registered no step`);
  const run: Run = { runId: randomUUID(), event, steps: {}, stack: [], statuses: [] };
  let stepId = "step";
  for (let i = 0; i < 10; i++) {
    const { status, text } = await callStep(signingKey, step.runtime.url, stepId, run, options.immediate);
    run.statuses.push(status);
    if (status === 200) return { output: JSON.parse(text), statuses: run.statuses };
    if (status !== 206) throw new Error(`request ${i + 1} of ${fn.id} answered ${status}: ${text}`);
    stepId = "step";
    for (const op of JSON.parse(text) as Op[]) {
      // A planned step is run by a request of its own; a run step's result goes with the next requests.
      if (op.op === "StepPlanned") stepId = op.id;
      else if (op.op === "StepRun") {
        run.steps[op.id] = { type: "data", data: op.data ?? null };
        run.stack.push(op.id);
      } else throw new Error(`${fn.id}: ${op.op} ${JSON.stringify(op.error ?? op.data)}`);
    }
    await options.between?.(i);
  }
  throw new Error(`${fn.id} did not finish in 10 requests`);
}

/** One signed request of a run, as Inngest's executor sends it to the step URL. */
async function callStep(
  signingKey: string,
  stepUrl: string,
  stepId: string,
  run: Run,
  immediate: boolean,
): Promise<{ status: number; text: string }> {
  const target = new URL(stepUrl);
  target.searchParams.set("stepId", stepId);
  const body = canonicalJson({
    event: run.event,
    events: [run.event],
    steps: run.steps,
    ctx: {
      run_id: run.runId,
      attempt: 0,
      disable_immediate_execution: !immediate,
      use_api: false,
      stack: { stack: run.stack, current: run.stack.length },
    },
  });
  const res = await fetch(target, {
    method: "POST",
    headers: { "content-type": "application/json", "x-inngest-signature": signature(body, signingKey) },
    body,
  });
  return { status: res.status, text: await res.text() };
}

export interface Balancer {
  /** Its address: the one URL the hosts are synced under. */
  url: string;
  /** The host (its address) each request was sent to, in order. */
  sentTo: string[];
  /** The hosts to take turns between from now on, starting with the first. */
  route(hosts: string[]): void;
  stop(): Promise<void>;
}

/**
 * A load balancer in front of several hosts: each request goes to the next host in turn, with its
 * method, path, headers (the Host header too, as most balancers keep it) and body unchanged.
 */
export async function startBalancer(hosts: string[]): Promise<Balancer> {
  let targets = [...hosts];
  let turn = 0;
  const sentTo: string[] = [];
  const server = createServer((req, res) => {
    const host = targets[turn++ % targets.length] as string;
    sentTo.push(host);
    const upstream = request(new URL(req.url ?? "/", host), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", (err) => res.writeHead(502).end(String(err)));
    req.pipe(upstream);
  });
  const url = await listen(server);
  return {
    url,
    sentTo,
    route(next) {
      targets = [...next];
      turn = 0;
    },
    stop: () => close(server),
  };
}
