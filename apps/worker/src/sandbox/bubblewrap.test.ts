import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DEFAULT_COMMAND_ALLOWLIST, DomainError, type SandboxWorkspace } from "@rhumbatron/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BubblewrapSandbox, bubblewrapAvailable, bubblewrapSandbox } from "./bubblewrap.ts";
import { expectAllGone, startedProcesses, startsSleep } from "./host-processes.ts";

const typescriptDir = dirname(createRequire(import.meta.url).resolve("typescript/package.json"));
const SECRETS = {
  DATABASE_URL: "postgres://secret@localhost/db",
  OPENAI_API_KEY: "sk-secret",
  INNGEST_SIGNING_KEY: "signkey-secret",
};
const PROJECT = "proj_6f1c9f8e-0000-4000-8000-0000000000b1";
const T = 20_000;

let root: string;
let sandbox: BubblewrapSandbox;
let ws: SandboxWorkspace;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  const probe = await bubblewrapAvailable();
  if (!probe.ok)
    throw new Error(`bubblewrap cannot run here (${probe.reason}); install it: apt-get install -y bubblewrap`);
  for (const [k, v] of Object.entries(SECRETS)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  root = await mkdtemp(join(tmpdir(), "rhumbatron-bwrap-"));
  sandbox = await bubblewrapSandbox({
    root,
    toolchainPaths: [dirname(process.execPath), typescriptDir],
    allowlist: [...DEFAULT_COMMAND_ALLOWLIST, "env"],
    limits: { maxOutputBytes: 4096, maxProcesses: 64 },
  });
  ws = await sandbox.open({ projectId: PROJECT, dirName: "run_bwrap1" });
});

afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  if (root) await rm(root, { recursive: true, force: true });
});

const node = (script: string, extra: Partial<Parameters<SandboxWorkspace["run"]>[0]> = {}) =>
  ws.run({ argv: ["node", "-e", script], timeoutMs: T, ...extra });

describe("bubblewrap sandbox", () => {
  it("isolates, places the run directory under the project's Sandbox, and runs the toolchain", async () => {
    expect(sandbox).toMatchObject({ kind: "bubblewrap", isolates: true });
    expect(ws.path).toBe(join(root, "proj-6f1c9f8e-0000-4000-8000-0000000000b1", "run_bwrap1"));
    const tsc = await ws.run({ argv: ["tsc", "--version"], timeoutMs: T });
    expect(tsc).toMatchObject({ exitCode: 0, timedOut: false });
    expect(tsc.stdout).toMatch(/^Version \d+\.\d+/);
    expect((await node("console.log(process.cwd(), process.getuid())")).stdout.trim()).toBe(
      "/workspace/run_bwrap1 1000",
    );
  });

  it("refuses network connections, even to a server on the host's loopback", async () => {
    let connections = 0;
    const server: Server = createServer((s) => {
      connections++;
      s.end("hello");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    try {
      // The same script reaches the server from the host, so a failure inside is the sandbox's doing.
      const script = `require("net").connect(${port}, "127.0.0.1")
        .on("connect", () => { console.log("connected"); process.exit(0); })
        .on("error", (e) => { console.log("failed " + e.code); process.exit(3); });`;
      const inside = await node(script);
      expect(inside.stdout).toMatch(/^failed E/);
      expect(inside.exitCode).toBe(3);
      expect(connections).toBe(0);
      const dns = await node(`require("dns").lookup("example.com", (e) => console.log(e ? "no dns" : "resolved"))`);
      expect(dns.stdout.trim()).toBe("no dns");
    } finally {
      server.close();
    }
  });

  it("writes inside the workspace only", async () => {
    const probe = `escape-${process.pid}`;
    const write = (p: string) =>
      `try { require("fs").writeFileSync(${JSON.stringify(p)}, "x"); console.log("wrote"); } catch (e) { console.log(e.code); }`;
    expect((await node(write("inside.txt"))).stdout.trim()).toBe("wrote");
    expect(await readFile(join(ws.path, "inside.txt"), "utf8")).toBe("x");
    for (const target of [`/work/main/${probe}`, `/etc/${probe}`, `/usr/${probe}`, `${typescriptDir}/${probe}`]) {
      const r = await node(write(target));
      expect(r.stdout.trim(), target).toMatch(/^(EROFS|ENOENT|EACCES)$/);
      expect(existsSync(target), target).toBe(false);
    }
    // /tmp is private to the command.
    expect((await node(write(`/tmp/${probe}`))).stdout.trim()).toBe("wrote");
    expect(existsSync(`/tmp/${probe}`)).toBe(false);
  });

  it("passes no host secret into the sandbox, only PATH, HOME, LANG and the explicit env", async () => {
    const r = await ws.run({ argv: ["env"], env: { GIT_TOKEN: "repo-token-123" }, timeoutMs: T });
    expect(r.exitCode).toBe(0);
    const env = Object.fromEntries(
      r.stdout
        .trim()
        .split("\n")
        .map((l) => [l.split("=")[0], l.slice(l.indexOf("=") + 1)]),
    );
    expect(Object.keys(env).sort()).toEqual(["GIT_TOKEN", "HOME", "LANG", "PATH", "PWD"]);
    expect(env.GIT_TOKEN).toBe("repo-token-123");
    expect(env.HOME).toBe("/workspace/run_bwrap1");
    for (const secret of Object.values(SECRETS)) expect(r.stdout).not.toContain(secret);
  });

  it("kills a command at its timeout, with everything it started", async () => {
    // Unique to this test process: another test's sleep never counts as this command's.
    const marker = `31.${process.pid}`;
    // The timeout leaves room for the host to find the processes before they are killed.
    const running = node(startsSleep(marker), { timeoutMs: 3_000 });
    const started = await startedProcesses(ws.path, marker, running);
    expect(await running).toMatchObject({ timedOut: true, exitCode: null, signal: "SIGKILL" });
    await expectAllGone(started);
  });

  it("stops a command when its signal aborts, with everything it started, without calling it a timeout", async () => {
    const marker = `16.${process.pid}`;
    const stop = new AbortController();
    const running = node(startsSleep(marker), { signal: stop.signal });
    const started = await startedProcesses(ws.path, marker, running);
    stop.abort();
    expect(await running).toMatchObject({ timedOut: false, exitCode: null, signal: "SIGKILL" });
    await expectAllGone(started);
  });

  it("cuts output past the cap and says so", async () => {
    const r = await node(`process.stdout.write("a".repeat(100000) + "z"); process.stderr.write("short")`);
    expect(r).toMatchObject({ exitCode: 0, truncated: true, stderr: "short" });
    expect(r.stdout).toBe(`${"a".repeat(2048)}\n… 95905 bytes cut (output cap 4096 bytes) …\n${"a".repeat(2047)}z`);
    expect((await node(`process.stdout.write("b".repeat(4096))`)).truncated).toBe(false);
  });

  it("caps the number of processes a command may start", async () => {
    expect(sandbox.processCap).toBe("cgroup");
    const r = await node(
      `const cp = require("child_process"); let ok = 0, failed = 0;
       for (let i = 0; i < 120; i++) { try { const c = cp.spawn("sleep", ["5"]); c.on("error", () => {}); if (c.pid) ok++; else failed++; } catch { failed++; } }
       console.log(JSON.stringify({ ok, failed })); process.exit(0);`,
    );
    const counts = JSON.parse(r.stdout) as { ok: number; failed: number };
    expect(counts.ok).toBeLessThan(64);
    expect(counts.failed).toBeGreaterThan(0);
  });

  it("passes stdin and refuses a cwd outside the workspace", async () => {
    const r = await ws.run({ argv: ["cat"], stdin: "from stdin", timeoutMs: T });
    expect(r.stdout).toBe("from stdin");
    await expect(ws.run({ argv: ["ls"], cwd: "../run_other", timeoutMs: T })).rejects.toThrow(/inside the workspace/);
    await expect(ws.run({ argv: ["ls"], cwd: "missing", timeoutMs: T })).rejects.toThrow(/not a directory/);
  });

  it("refuses commands off the allowlist before starting anything", async () => {
    for (const argv of [
      ["bash", "-c", "id"],
      ["/bin/sh", "-c", "id"],
      ["curl", "http://127.0.0.1"],
    ]) {
      const err = await ws.run({ argv, timeoutMs: T }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining(JSON.stringify(argv[0])) });
    }
  });

  it("fails the next command cleanly when the run directory is deleted mid-run (Sandbox loss)", async () => {
    const lost = await sandbox.open({ projectId: PROJECT, dirName: "cand-lost1" });
    const running = lost.run({
      argv: ["node", "-e", `setTimeout(() => require("fs").writeFileSync("late.txt", "x"), 500)`],
      timeoutMs: T,
    });
    await new Promise((r) => setTimeout(r, 150));
    await rm(lost.path, { recursive: true, force: true });
    const finished = await running; // must settle (any exit code), never hang
    expect(finished.timedOut).toBe(false);
    const err = await lost.run({ argv: ["ls"], timeoutMs: T }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "UNAVAILABLE", details: { reason: "sandbox_lost" } });
    expect(existsSync(lost.path)).toBe(false);
  });

  it("removes the run directory", async () => {
    const w = await sandbox.open({ projectId: PROJECT, dirName: "run_gone1" });
    await w.run({ argv: ["mkdir", "-p", "a/b"], timeoutMs: T });
    await w.remove();
    expect(existsSync(w.path)).toBe(false);
  });
});
