import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { DEV_AUTH_SECRET } from "@rhumbatron/core";
import { describe, expect, it } from "vitest";
import { freePort } from "./lib/ports.ts";
import { ROOT } from "./lib/stack.ts";

// `npm start` with bad settings must exit non-zero with one line saying what is wrong and what to
// do: no hang, no stack trace as the only message, nothing started.
function start(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(join(ROOT, "node_modules/.bin/tsx"), [join(ROOT, "scripts/start.ts"), ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

function oneClearLine(stderr: string): string {
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
  return lines[0] ?? "";
}

describe("npm start refuses bad settings with one clear line", () => {
  it("malformed DATABASE_URL", async () => {
    const r = await start({ DATABASE_URL: "mysql://nope" });
    expect(r.code).toBe(1);
    expect(oneClearLine(r.stderr)).toMatch(
      /^rhumbatron: DATABASE_URL must look like postgresql:\/\/user:password@host:5432\/database$/,
    );
  });

  it("unreachable database", async () => {
    const r = await start({ DATABASE_URL: "postgresql://nobody@127.0.0.1:1/nowhere" });
    expect(r.code).toBe(1);
    expect(oneClearLine(r.stderr)).toMatch(/cannot reach the database at 127\.0\.0\.1:1\/nowhere .*check DATABASE_URL/);
  });

  it("web port in use", async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, "0.0.0.0", () => r()));
    const port = (srv.address() as { port: number }).port;
    try {
      const r = await start({ PORT: String(port) });
      expect(r.code).toBe(1);
      expect(oneClearLine(r.stderr)).toBe(
        `rhumbatron: port ${port} is in use; stop what is using it or set PORT to a free port`,
      );
    } finally {
      srv.close();
    }
  });

  it("embedded Postgres port in use", async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
    const pgPort = (srv.address() as { port: number }).port;
    try {
      const r = await start({ PORT: String(await freePort()), RHUMBATRON_EMBEDDED_PG_PORT: String(pgPort) });
      expect(r.code).toBe(1);
      expect(oneClearLine(r.stderr)).toMatch(new RegExp(`port ${pgPort} for the embedded Postgres is in use`));
    } finally {
      srv.close();
    }
  });

  it("web port in use on the address HOST names", async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
    const port = (srv.address() as { port: number }).port;
    try {
      const r = await start({ PORT: String(port), HOST: "127.0.0.1" });
      expect(r.code).toBe(1);
      expect(oneClearLine(r.stderr)).toBe(
        `rhumbatron: port ${port} is in use; stop what is using it or set PORT to a free port`,
      );
    } finally {
      srv.close();
    }
  });

  it("prod with the public development secret", async () => {
    const r = await start({ RHUMBATRON_ENV: "prod", RHUMBATRON_AUTH_SECRET: DEV_AUTH_SECRET });
    expect(r.code).toBe(1);
    expect(oneClearLine(r.stderr)).toMatch(/RHUMBATRON_AUTH_SECRET must not be the public development secret/);
    expect(r.stdout).toBe("");
  });

  it("an address other machines reach while sessions are signed with the development secret", async () => {
    const r = await start({ HOST: "0.0.0.0", RHUMBATRON_AUTH_SECRET: "" });
    expect(r.code).toBe(1);
    expect(oneClearLine(r.stderr)).toMatch(
      /^rhumbatron: HOST=0\.0\.0\.0 lets other machines reach Rhumbatron, but sessions are signed with the public development secret; set RHUMBATRON_AUTH_SECRET/,
    );
    // Refused before anything started: not even the setup step spoke.
    expect(r.stdout).toBe("");
  });

  it("invalid executor kind", async () => {
    const r = await start({ RHUMBATRON_EXECUTOR: "cron" });
    expect(r.code).toBe(1);
    expect(oneClearLine(r.stderr)).toMatch(/RHUMBATRON_EXECUTOR/);
  });

  it("a number of workers that is not one to eight", async () => {
    const r = await start({}, ["--workers", "0"]);
    expect(r.code).toBe(1);
    expect(oneClearLine(r.stderr)).toMatch(/--workers takes a number of worker processes from 1 to 8, not "0"/);
    expect(r.stdout).toBe("");
  });
});
