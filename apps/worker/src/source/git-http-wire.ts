import type { ChildProcess } from "node:child_process";
import { stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { pipeline as pipeStreams, type Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { isDomainError } from "@rhumbatron/core";
import type { Logger } from "../logger.ts";

// The smart-HTTP wire shared by reads and pushes (git-http.ts, git-http-push.ts): git's processes,
// pkt-lines, limits and plain answers.

export interface PushOptions {
  /** Where pushes are received, each into its own new bare repository; never inside `repoRoot`. */
  quarantineRoot: string;
  /** Throws DomainError("FORBIDDEN") unless `token` is the live push token of the waiting project. */
  authorize: (projectId: string, token: string) => Promise<void>;
  /**
   * Takes a received push (spends the token, starts provisioning from `quarantine`); throws
   * DomainError("FORBIDDEN") when it may no longer (another push won, the token was replaced).
   */
  accept: (projectId: string, token: string, quarantine: string) => Promise<void>;
  /** The largest receive-pack request body read, after gzip (413 beyond it); default `source.pushMaxBytes`. */
  maxRequestBytes?: number;
}

/** One git HTTP endpoint's settings, as every request's handling reads them. */
export interface GitHttp {
  /** Runs git with these arguments: no shell, and only PATH from the environment. */
  git: (args: string[]) => ChildProcess;
  repoRoot: string;
  authorize: (repo: string, token: string | null) => Promise<void>;
  logger?: Pick<Logger, "info" | "warn"> | undefined;
  maxRequestBytes: number;
  push?: PushOptions | undefined;
  /** Throws DomainError("FORBIDDEN") when `token` may not push to the fork `repo`; absent, no fork takes a push. */
  authorizeWrite?: ((repo: string, token: string | null) => Promise<void>) | undefined;
  /** Other services mounted on the same port, each under its path prefix. */
  routes?: readonly Route[] | undefined;
}

export interface Route {
  prefix: string;
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
}

export const ADVERTISEMENT = "application/x-git-upload-pack-advertisement";
export const RESULT = "application/x-git-upload-pack-result";
export const PUSH_ADVERTISEMENT = "application/x-git-receive-pack-advertisement";
export const PUSH_RESULT = "application/x-git-receive-pack-result";
// Nothing of the pusher's runs or configures git here: no hooks, no templates copied into a new repository.
export const NO_HOOKS = ["-c", "core.hooksPath=/dev/null"];

export async function advertise(
  h: GitHttp,
  res: ServerResponse,
  repo: string,
  dir: string,
  service = "upload-pack",
): Promise<void> {
  // Buffered (ref lists are small) so a git failure can still become a clean 500.
  const args =
    service === "upload-pack"
      ? ["upload-pack", "--strict", "--stateless-rpc", "--advertise-refs", dir]
      : [...NO_HOOKS, "receive-pack", "--stateless-rpc", "--advertise-refs", dir];
  const child = h.git(args);
  killOnClientGone(res, child);
  child.stdin?.end();
  const chunks: Buffer[] = [];
  child.stdout?.on("data", (c: Buffer) => chunks.push(c));
  const { code, stderr } = await exited(child);
  if (code !== 0) return gitFailed(h, res, repo, code, stderr);
  // Smart-HTTP framing: the service announcement pkt-line and a flush precede git's own output.
  const type = service === "upload-pack" ? ADVERTISEMENT : PUSH_ADVERTISEMENT;
  res.writeHead(200, { "Content-Type": type, "Cache-Control": "no-cache" });
  res.end(Buffer.concat([Buffer.from(`${pktLine(`# service=git-${service}\n`)}0000`), ...chunks]));
}

export function tooLarge(h: GitHttp, req: IncomingMessage, res: ServerResponse, max = h.maxRequestBytes): void {
  // Unread bytes stay unread: the connection closes after the answer instead of draining them.
  res.setHeader("Connection", "close");
  send(res, 413, `the request body is larger than ${max} bytes`);
  req.resume();
}

export function gitFailed(
  h: GitHttp,
  res: ServerResponse,
  repo: string,
  code: number | null,
  stderr: string,
  what = "upload-pack",
): void {
  // stderr names server paths: it goes to the log, never to the client.
  h.logger?.warn({ repo, code, stderr }, `git ${what} failed`);
  send(res, 500, "git failed");
}

/**
 * Checks the request's token with `check`. Answers 401 (with the Basic challenge git answers with
 * the URL's credentials) when there is none, 403 with the refusal's message, or 404, and returns
 * false; true when the token is accepted.
 */
export async function tokenAccepted(
  req: IncomingMessage,
  res: ServerResponse,
  mode: "read" | "write",
  check: (token: string) => Promise<void>,
): Promise<boolean> {
  const token = tokenFrom(req.headers.authorization);
  if (!token) {
    send(res, 401, `a ${mode} token is required`, { "WWW-Authenticate": 'Basic realm="rhumbatron"' });
    return false;
  }
  try {
    await check(token);
    return true;
  } catch (err) {
    if (isDomainError(err) && err.code === "FORBIDDEN") send(res, 403, err.message);
    else if (isDomainError(err) && err.code === "NOT_FOUND") send(res, 404, "repository not found");
    else throw err;
    return false;
  }
}

/** The token from `Authorization: Bearer <t>` or the password of HTTP Basic (user name ignored). */
export function tokenFrom(header: string | undefined): string | null {
  const m = /^(basic|bearer)\s+(\S+)\s*$/i.exec(header ?? "");
  if (!m?.[2]) return null;
  if (m[1]?.toLowerCase() === "bearer") return m[2];
  const decoded = Buffer.from(m[2], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon >= 0 && colon < decoded.length - 1 ? decoded.slice(colon + 1) : null;
}

export async function isBareRepo(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory() && (await stat(join(dir, "HEAD"))).isFile();
  } catch {
    return false;
  }
}

/** Passes bytes through until more than `maxBytes` went by, then fails the pipeline (and says so once). */
export function byteLimit(maxBytes: number, onExceeded: () => void): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen <= maxBytes) return done(null, chunk);
      onExceeded();
      done(new Error(`request body over ${maxBytes} bytes`));
    },
  });
}

/** pkt-line: four hex digits giving the length including themselves, then the payload. */
export function pktLine(payload: string): string {
  return (Buffer.byteLength(payload) + 4).toString(16).padStart(4, "0") + payload;
}

export function killOnClientGone(res: ServerResponse, child: ChildProcess): void {
  res.on("close", () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
}

/** Resolves once git has exited (or failed to start); keeps the last few KB of stderr for the log. */
export function exited(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr = (stderr + c.toString("utf8")).slice(-4096);
  });
  child.stdin?.on("error", () => {}); // EPIPE when git exits before reading all input
  return new Promise((resolve) => {
    child.once("error", (err) => resolve({ code: null, stderr: String(err) }));
    child.once("close", (code) => resolve({ code, stderr }));
  });
}

export function send(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-cache", ...headers });
  res.end(`${message}\n`);
}

/** One ref-update command of a push: `<old> <new> <ref>`; an all-zero id is "no such ref" (create, delete). */
export interface RefUpdate {
  oldOid: string;
  newOid: string;
  ref: string;
}

/** The head of a receive-pack request: its ref updates and the capabilities the client asked for. */
export interface PushHead {
  updates: RefUpdate[];
  capabilities: Set<string>;
}

const OID = "[0-9a-f]{40}|[0-9a-f]{64}";
const UPDATE = new RegExp(`^(${OID}) (${OID}) ([^\\u0000-\\u0020\\u007f]+)$`);
const SHALLOW = new RegExp(`^shallow (${OID})$`);
export const isNullOid = (oid: string) => /^0+$/.test(oid);
// A request whose ref updates have not ended within this many bytes is refused: a real push names a few refs.
const MAX_HEAD_BYTES = 64 * 1024;

/**
 * Parses the pkt-lines at the start of a receive-pack request body, up to their flush: `shallow`
 * lines, then `<old> <new> <ref>`, the first followed by NUL and the capabilities. Undefined while
 * `buf` holds too little to tell; a string when the head is malformed.
 */
export function parsePushHead(buf: Buffer): PushHead | string | undefined {
  const head: PushHead = { updates: [], capabilities: new Set() };
  let at = 0;
  while (at + 4 <= buf.length) {
    const hex = buf.toString("latin1", at, at + 4);
    if (!/^[0-9a-f]{4}$/.test(hex)) return "malformed push request";
    const length = Number.parseInt(hex, 16);
    if (length === 0) return head;
    if (length < 5) return "malformed push request";
    if (at + length > buf.length) return undefined;
    let line = buf.toString("utf8", at + 4, at + length);
    at += length;
    if (line.endsWith("\n")) line = line.slice(0, -1);
    const nul = line.indexOf("\u0000");
    if (nul >= 0 && head.updates.length === 0) {
      for (const c of line.slice(nul + 1).split(" ")) if (c) head.capabilities.add(c);
      line = line.slice(0, nul);
    }
    if (head.updates.length === 0 && SHALLOW.test(line)) continue;
    const m = UPDATE.exec(line);
    if (!m) return "malformed push request";
    head.updates.push({ oldOid: m[1] ?? "", newOid: m[2] ?? "", ref: m[3] ?? "" });
  }
  return undefined;
}

/**
 * Reads `source` until its push head is complete. Returns the head (or why it is not one) and
 * every byte read, which git must still be given; `source` is left paused.
 */
function readPushHead(source: Readable): Promise<{ read: Buffer; head: PushHead | string }> {
  return new Promise((resolve) => {
    let read: Buffer = Buffer.alloc(0);
    const done = (head: PushHead | string) => {
      source.pause();
      source.off("data", onData).off("end", onEnd).off("error", onEnd);
      resolve({ read, head });
    };
    const onData = (chunk: Buffer) => {
      read = Buffer.concat([read, chunk]);
      const head = parsePushHead(read);
      if (head !== undefined) done(head);
      else if (read.length > MAX_HEAD_BYTES) done("the push names too many refs");
    };
    const onEnd = () => done(parsePushHead(read) ?? "the request ends before its ref updates do");
    source.on("data", onData).once("end", onEnd).once("error", onEnd);
  });
}

/**
 * git's report-status answer refusing every ref update of `head` with `reason`, on side-band 1 when
 * the client asked for it, so git prints "[remote rejected] (<reason>)". Null when the client asked
 * for no report (it then gets a 403).
 */
export function refusalReport(head: PushHead, reason: string): Buffer | null {
  const caps = head.capabilities;
  if (!caps.has("report-status") && !caps.has("report-status-v2")) return null;
  const lines = ["unpack ok\n", ...head.updates.map((u) => `ng ${u.ref} ${reason}\n`)];
  const report = Buffer.from(`${lines.map(pktLine).join("")}0000`);
  if (!caps.has("side-band-64k") && !caps.has("side-band")) return report;
  // Band 1 carries the report, in pieces no larger than plain side-band allows.
  const banded: Buffer[] = [];
  for (let i = 0; i < report.length; i += 995) {
    const piece = report.subarray(i, i + 995);
    banded.push(Buffer.from(`${(piece.length + 5).toString(16).padStart(4, "0")}\u0001`), piece);
  }
  return Buffer.concat([...banded, Buffer.from("0000")]);
}

/** What one receive-pack run takes: the repository, the body limit and, for forks, the checks before git. */
export interface Receive {
  /** The repository's name (or the project's ID), for the log. */
  repo: string;
  dir: string;
  maxBytes: number;
  /** More `-c name=value` settings for receive-pack. */
  config?: string[];
  /** Why the push's ref updates are refused, or null; checked before git reads a byte. */
  refuse?: (head: PushHead) => string | null;
}

/**
 * Runs git receive-pack on the request's body (gzip or not, at most `maxBytes` after it) and holds
 * its answer until git has exited: returns it then, or null when the request was answered here
 * (415, 413, 400, 500 or a refusal). git's answer is never half sent.
 */
export async function receivePack(
  h: GitHttp,
  req: IncomingMessage,
  res: ServerResponse,
  r: Receive,
): Promise<Buffer | null> {
  const encoding = (req.headers["content-encoding"] ?? "identity").toLowerCase();
  if (!["identity", "gzip", "x-gzip"].includes(encoding)) {
    send(res, 415, "unsupported content encoding");
    return null;
  }
  if (Number(req.headers["content-length"]) > r.maxBytes) {
    tooLarge(h, req, res, r.maxBytes);
    return null;
  }
  let overLimit = false;
  const limit = byteLimit(r.maxBytes, () => {
    overLimit = true;
  });
  // Counted after gzip; a failure anywhere (bad gzip, over the limit, the client gone) fails `source`.
  const source = pipeStreams(encoding === "identity" ? req : req.pipe(createGunzip()), limit, () => {});
  let read: Buffer = Buffer.alloc(0);
  if (r.refuse) {
    const gate = await readPushHead(source);
    read = gate.read;
    const head = gate.head;
    const reason = overLimit || typeof head === "string" ? null : r.refuse(head);
    if (overLimit || typeof head === "string" || reason !== null) {
      source.on("error", () => {}).resume(); // the rest of the body is read and dropped
      if (overLimit) tooLarge(h, req, res, r.maxBytes);
      else if (typeof head === "string") send(res, 400, head);
      else refuseUpdates(res, head, reason ?? "");
      return null;
    }
  }
  const config = [...NO_HOOKS, "-c", `receive.maxInputSize=${r.maxBytes}`, ...(r.config ?? [])];
  const child = h.git([...config, "receive-pack", "--stateless-rpc", r.dir]);
  killOnClientGone(res, child);
  const stdin = child.stdin as NodeJS.WritableStream;
  stdin.write(read);
  pipeline(source, stdin).catch(() => child.kill("SIGKILL"));
  const out: Buffer[] = [];
  child.stdout?.on("data", (c: Buffer) => out.push(c));
  const { code, stderr } = await exited(child);
  if (overLimit) {
    tooLarge(h, req, res, r.maxBytes);
    return null;
  }
  if (code !== 0) {
    gitFailed(h, res, r.repo, code, stderr, "receive-pack");
    return null;
  }
  return Buffer.concat(out);
}

/** Refuses a push's ref updates: git's report when the client asked for one, else a 403; both say why. */
function refuseUpdates(res: ServerResponse, head: PushHead, reason: string): void {
  const report = refusalReport(head, reason);
  if (report) res.writeHead(200, { "Content-Type": PUSH_RESULT, "Cache-Control": "no-cache" }).end(report);
  else send(res, 403, reason);
}
