import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type Command, InvalidArgumentError } from "commander";
import { createRhumbatronClient } from "../client.ts";
import { RhumbatronError, type RhumbatronErrorCode } from "../errors.ts";

/** The CLI's exit codes (docs/cli.md). */
export const EXIT = { ok: 0, usage: 1, refused: 2, stale: 3, auth: 4, unreachable: 5 } as const;

export const EXIT_FOR: Record<RhumbatronErrorCode, number> = {
  UNAUTHORIZED: EXIT.auth,
  FORBIDDEN: EXIT.auth,
  BAD_REQUEST: EXIT.usage,
  NOT_FOUND: EXIT.usage,
  CONFLICT: EXIT.refused,
  PRECONDITION_FAILED: EXIT.refused,
  TOO_MANY_REQUESTS: EXIT.refused,
  UNAVAILABLE: EXIT.unreachable,
  UNREACHABLE: EXIT.unreachable,
  BAD_RESPONSE: EXIT.unreachable,
  INTERNAL: EXIT.usage,
  ABORTED: EXIT.usage,
};

export const DEFAULT_URL = "http://localhost:3000";

export const HELP_FOOTER = `
Settings: --url or RHUMBATRON_URL (default ${DEFAULT_URL}), --token or RHUMBATRON_TOKEN
(an API token rbt_…, created at <url>/settings/tokens), --tenant or RHUMBATRON_TENANT (optional:
a token acts in exactly one tenant).

Exit codes: 0 ok; 1 usage or input error (bad flags, bad Work Graph, not found); 2 blocked or
refused (promotion blocked, Candidate rejected, Change failed or cancelled, a conflicting
decision); 3 stale (canonical moved past the Candidate's base); 4 auth (token missing, unknown or
revoked, or its role or tenant does not allow the command); 5 server unreachable or unavailable.`;

export const SHORT_FOOTER = `
Exit codes: 0 ok, 1 usage/input, 2 blocked/refused, 3 stale, 4 auth, 5 unreachable (rhumbatron --help).`;

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
  /** Everything on standard input (a password given with --password-stdin, a secret with --value-stdin). */
  readStdin?: () => Promise<string>;
}

export async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export const processIo: CliIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  readStdin: readProcessStdin,
};

export interface GlobalOptions {
  url?: string;
  token?: string;
  tenant?: string;
  json?: boolean;
}

/** Thrown by a command to end with a code after it printed its own output. */
export class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** What every command takes: the client it acts with, from flags then environment, and the io. */
export function commandSetup(io: CliIo) {
  /** The client for a command, from flags then environment; no token is an auth error before any request. */
  return (cmd: Command) => {
    const o = cmd.optsWithGlobals<GlobalOptions>();
    const url = o.url ?? io.env.RHUMBATRON_URL ?? DEFAULT_URL;
    const token = o.token ?? io.env.RHUMBATRON_TOKEN;
    const tenant = o.tenant ?? io.env.RHUMBATRON_TENANT;
    if (!token) {
      throw new RhumbatronError(
        "UNAUTHORIZED",
        `no API token: set RHUMBATRON_TOKEN or pass --token; create one at ${url.replace(/\/+$/, "")}/settings/tokens`,
      );
    }
    const client = createRhumbatronClient({ url, token, ...(tenant ? { tenant } : {}) });
    const print = (value: unknown, human: () => string) => io.out(o.json ? JSON.stringify(value) : human());
    return { client, json: Boolean(o.json), print };
  };
}

export interface Cli {
  setup: ReturnType<typeof commandSetup>;
  io: CliIo;
}

export function forEachCommand(cmd: Command, fn: (c: Command) => void): void {
  fn(cmd);
  for (const sub of cmd.commands) forEachCommand(sub, fn);
}

/** Commander's way to take an option several times. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `--file path` (read from `from`/path) or `--file repoPath=localFile`, as a file of the fix. */
export async function fileToPublish(given: string, from: string): Promise<{ path: string; content: string }> {
  const eq = given.indexOf("=");
  const path = eq === -1 ? given : given.slice(0, eq);
  const local = eq === -1 ? join(from, given) : given.slice(eq + 1);
  return { path, content: await readText(local) };
}

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

export async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new RhumbatronError("BAD_REQUEST", `cannot read ${path} (${code}); check the --file path`);
  }
}

/** The push instruction, shown once: the token is not kept anywhere it could be shown again. */
export function formatPushAccess(
  projectId: string,
  name: string | null,
  r: { url: string; command: string; expiresAt: Date | string },
): string {
  return [
    `${projectId}${name ? `  ${name}` : ""}: waiting for a push to ${r.url}`,
    `In your repository, push the branch to become main (the token works once, until ${new Date(r.expiresAt).toISOString()}):`,
    `  ${r.command}`,
    `This token is not shown again; rhumbatron projects push-access ${projectId} issues a new one while the project waits.`,
    `rhumbatron projects show ${projectId} says when it is active, or why the push failed`,
  ].join("\n");
}
