import type { ChildProcess } from "node:child_process";
import { stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { Transform } from "node:stream";
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
