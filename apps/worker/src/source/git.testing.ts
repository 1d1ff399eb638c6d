import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Command-line git for tests: sources to import and the independent oracle for what was imported. */

/** Command-line git with no user or system configuration, fixed identities and dates. */
export function cli(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Ada", "-c", "user.email=ada@example.com", ...args], {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_DATE: "2026-01-02T03:04:05Z",
      GIT_COMMITTER_DATE: "2026-01-02T03:04:05Z",
    },
  }).trim();
}

/**
 * A smart-HTTP git server for the test: each request runs command-line git's own CGI, `git
 * http-backend`, over the bare repositories in `root` (read only: receive-pack stays off).
 */
export async function gitHttpServer(
  root: string,
  basic?: { username: string; password: string },
): Promise<{ url: string; close: () => Promise<void> }> {
  const children = new Set<ChildProcess>();
  const expected = basic ? `Basic ${Buffer.from(`${basic.username}:${basic.password}`).toString("base64")}` : null;
  const server: Server = createServer((req, res) => {
    // With `basic`, every request must carry exactly those credentials (as a private host asks).
    if (expected && req.headers.authorization !== expected) {
      req.resume();
      res.writeHead(401, { "www-authenticate": 'Basic realm="git"' });
      res.end();
      return;
    }
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const child = spawn("git", ["http-backend"], {
      env: {
        PATH: process.env.PATH ?? "",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.replace(/^\?/, ""),
        REQUEST_METHOD: req.method ?? "GET",
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        HTTP_CONTENT_ENCODING: req.headers["content-encoding"] ?? "",
        GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
        REMOTE_ADDR: "127.0.0.1",
      },
    });
    children.add(child);
    child.on("exit", () => children.delete(child));
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let started = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (started) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      started = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
        const i = line.indexOf(":");
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else res.setHeader(name, value);
      }
      res.statusCode = status;
      res.write(head.subarray(end + 4));
    });
    child.on("close", () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const child of children) child.kill();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
