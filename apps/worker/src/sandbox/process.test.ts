import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_COMMAND_ALLOWLIST, DomainError, type SandboxWorkspace } from "@rhumbatron/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectAllGone, startedProcesses, startsSleep } from "./host-processes.ts";
import { createSandbox } from "./index.ts";
import { type PlainProcessSandbox, plainProcessSandbox } from "./process.ts";

const SECRETS = {
  DATABASE_URL: "postgres://secret@localhost/db",
  OPENAI_API_KEY: "sk-secret",
  INNGEST_SIGNING_KEY: "signkey-secret",
};
const PROJECT = "proj_6f1c9f8e-0000-4000-8000-0000000000c2";
const T = 20_000;
const warnings: { fields: Record<string, unknown>; message: string }[] = [];
const log = { warn: (fields: Record<string, unknown>, message: string) => void warnings.push({ fields, message }) };

let root: string;
let sandbox: PlainProcessSandbox;
let ws: SandboxWorkspace;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  for (const [k, v] of Object.entries(SECRETS)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  root = await mkdtemp(join(tmpdir(), "rhumbatron-proc-"));
  sandbox = await plainProcessSandbox({
    root,
    allowlist: [...DEFAULT_COMMAND_ALLOWLIST, "env"],
    limits: { maxOutputBytes: 4096, maxProcesses: 64 },
    log,
    reason: "test",
  });
  ws = await sandbox.open({ projectId: PROJECT, dirName: "cand-proc1" });
});

afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  if (root) await rm(root, { recursive: true, force: true });
});

const node = (script: string, timeoutMs = T) => ws.run({ argv: ["node", "-e", script], timeoutMs });

describe("plain-process fallback sandbox", () => {
  it("says loudly, at creation, that it does not isolate", () => {
    expect(sandbox).toMatchObject({ kind: "process", isolates: false });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/DOES NOT ISOLATE/);
    expect(warnings[0]?.message).toContain("apt-get install -y bubblewrap");
    expect(warnings[0]?.fields).toMatchObject({ sandbox: "process", reason: "test" });
    expect(sandbox.warning).toBe(warnings[0]?.message);
  });

  it("runs in the workspace with a scrubbed environment: no host secret, only the explicit token", async () => {
    expect(ws.path).toBe(join(root, "proj-6f1c9f8e-0000-4000-8000-0000000000c2", "cand-proc1"));
    const r = await ws.run({ argv: ["env"], env: { GIT_TOKEN: "repo-token-456" }, timeoutMs: T });
    expect(r.exitCode).toBe(0);
    const keys = r.stdout
      .trim()
      .split("\n")
      .map((l) => l.split("=")[0]);
    expect(keys.sort()).toEqual(["GIT_TOKEN", "HOME", "LANG", "PATH", "PWD"]);
    expect(r.stdout).toContain(`HOME=${ws.path}\n`);
    expect(r.stdout).toContain("GIT_TOKEN=repo-token-456");
    for (const secret of Object.values(SECRETS)) expect(r.stdout).not.toContain(secret);
    await node(`require("fs").writeFileSync("made.txt", "ok")`);
    expect(await readFile(join(ws.path, "made.txt"), "utf8")).toBe("ok");
  });

  it("kills a command at its timeout, with its children", async () => {
    // Unique to this test process: another test's sleep never counts as this command's.
    const marker = `27.${process.pid}`;
    // The timeout leaves room for the host to find the processes before they are killed.
    const running = node(startsSleep(marker), 3_000);
    const started = await startedProcesses(ws.path, marker, running);
    expect(await running).toMatchObject({ timedOut: true, exitCode: null, signal: "SIGKILL" });
    await expectAllGone(started);
  });

  it("stops a command when its signal aborts, with its children, without calling it a timeout", async () => {
    const marker = `14.${process.pid}`;
    const stop = new AbortController();
    const running = ws.run({ argv: ["node", "-e", startsSleep(marker)], timeoutMs: T, signal: stop.signal });
    const started = await startedProcesses(ws.path, marker, running);
    stop.abort();
    expect(await running).toMatchObject({ timedOut: false, exitCode: null, signal: "SIGKILL" });
    await expectAllGone(started);
    const already = new AbortController();
    already.abort();
    const never = await ws.run({
      argv: ["node", "-e", "setInterval(() => {}, 1000)"],
      timeoutMs: T,
      signal: already.signal,
    });
    expect(never).toMatchObject({ timedOut: false, signal: "SIGKILL" });
  });

  it("cuts output past the cap and says so, keeping its start and its end", async () => {
    const r = await node(`process.stderr.write("s" + "e".repeat(10000) + "z"); process.stdout.write("fine")`);
    expect(r).toMatchObject({ exitCode: 0, truncated: true, stdout: "fine" });
    expect(r.stderr).toBe(`s${"e".repeat(2047)}\n… 5906 bytes cut (output cap 4096 bytes) …\n${"e".repeat(2047)}z`);
  });

  it("refuses bash, /bin/sh and curl, and a cwd outside the workspace", async () => {
    for (const argv of [
      ["bash", "-c", "id"],
      ["/bin/sh", "-c", "id"],
      ["curl", "http://127.0.0.1"],
    ]) {
      const err = await ws.run({ argv, timeoutMs: T }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining(JSON.stringify(argv[0])) });
    }
    await expect(ws.run({ argv: ["ls"], cwd: "/etc", timeoutMs: T })).rejects.toThrow(/inside the workspace/);
    await expect(ws.run({ argv: ["ls"], env: { PATH: "/tmp" }, timeoutMs: T })).rejects.toThrow(/may not be set/);
  });

  it("fails the next command cleanly once the run directory is gone (Sandbox loss)", async () => {
    const lost = await sandbox.open({ projectId: PROJECT, dirName: "run_lost2" });
    expect((await lost.run({ argv: ["ls"], timeoutMs: T })).exitCode).toBe(0);
    await rm(lost.path, { recursive: true, force: true });
    const err = await lost.run({ argv: ["ls"], timeoutMs: T }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "UNAVAILABLE", details: { reason: "sandbox_lost" } });
    expect(existsSync(lost.path)).toBe(false);
  });

  it("is what createSandbox picks when bubblewrap cannot run, and bubblewrap when the probe says it can", async () => {
    const limits = { maxOutputBytes: 1024, maxProcesses: 64 };
    const before = warnings.length;
    // The real probe against a bwrap that is not there: the reason says how to install it.
    const fallback = await createSandbox({ root, limits, log, bwrapPath: "/nonexistent/bwrap" });
    // Local providers are charged the seconds they ran, never a cloud container's idle tail.
    expect(fallback).toMatchObject({ kind: "process", isolates: false, billing: "measured" });
    expect(warnings[before]?.fields.reason).toMatch(/apt-get install -y bubblewrap/);
    expect(fallback.status.note).toMatch(/NOT isolated/);
    // The choice itself does not depend on this machine: the test decides what the probe sees.
    const chosen = await createSandbox({ root, limits, log, probe: async () => ({ ok: true }) });
    expect(chosen).toMatchObject({
      kind: "bubblewrap",
      isolates: true,
      billing: "measured",
      status: { isolates: true, note: null },
    });
  });

  it("refuses every workspace, saying why and how to allow it, when isolation is required and bubblewrap cannot run", async () => {
    const limits = { maxOutputBytes: 1024, maxProcesses: 64 };
    const refusing = await createSandbox({
      root,
      limits,
      log,
      requireIsolation: true,
      probe: async () => ({ ok: false, reason: "bwrap: not found" }),
    });
    expect(refusing).toMatchObject({ isolates: false, billing: "measured", status: { isolates: false } });
    const err = await refusing.open({ projectId: PROJECT, dirName: "cand-refused" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: "UNAVAILABLE" });
    expect((err as Error).message).toMatch(/refused: they would not be isolated \(bwrap: not found\)/);
    expect((err as Error).message).toContain("RHUMBATRON_ALLOW_UNISOLATED=1");
    expect(existsSync(join(root, "proj-6f1c9f8e-0000-4000-8000-0000000000c2", "cand-refused"))).toBe(false);
    // With bubblewrap available, requiring isolation changes nothing.
    const isolated = await createSandbox({
      root,
      limits,
      log,
      requireIsolation: true,
      probe: async () => ({ ok: true }),
    });
    expect(isolated).toMatchObject({ kind: "bubblewrap", isolates: true });
  });
});
