import { lstat, mkdir, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { type AgentTools, DomainError, isAllowedCommand, type SandboxWorkspace } from "@rhumbatron/core";

/**
 * The tools an Agent may call, bound to one workspace. Every path must stay inside the run
 * directory: absolute paths, `..`, the `.git` folder and symlinks that lead out are refused.
 * Commands go through the Sandbox and must be on the project's allowlist.
 */
export function workspaceTools(
  ws: SandboxWorkspace,
  o: { allowlist: string[]; commandTimeoutMs: number; signal?: AbortSignal },
): AgentTools {
  const root = resolve(ws.path);
  const refuse = (path: string, why: string) =>
    new DomainError("FORBIDDEN", `refused path ${JSON.stringify(path)}: ${why}`);

  async function inside(path: string): Promise<string> {
    if (typeof path !== "string" || path.length === 0 || path.length > 500) throw refuse(path, "empty or too long");
    if (isAbsolute(path)) throw refuse(path, "absolute paths are not allowed");
    const full = resolve(root, path);
    const rel = relative(root, full);
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) throw refuse(path, "outside the run directory");
    if (rel.split(sep)[0] === ".git") throw refuse(path, "the .git folder is not a tool target");
    // Follow what exists of the path: a symlink anywhere on it must not lead out of the workspace.
    let probe = full;
    for (;;) {
      try {
        await lstat(probe);
        break;
      } catch {
        const up = dirname(probe);
        if (up === probe) break;
        probe = up;
      }
    }
    const real = await realpath(probe);
    const realRoot = await realpath(root);
    if (real !== realRoot && !real.startsWith(realRoot + sep))
      throw refuse(path, "a symlink leads outside the run directory");
    return full;
  }

  return {
    async readFile(path) {
      return readFile(await inside(path), "utf8");
    },
    async writeFile(path, content) {
      const full = await inside(path);
      await mkdir(dirname(full), { recursive: true });
      await writeFile(full, content);
    },
    async deleteFile(path) {
      await rm(await inside(path), { force: true });
    },
    async listFiles() {
      const out: string[] = [];
      const walk = async (d: string) => {
        for (const e of await readdir(d, { withFileTypes: true })) {
          if (d === root && e.name === ".git") continue;
          const full = join(d, e.name);
          if (e.isDirectory()) await walk(full);
          else out.push(relative(root, full).split(sep).join("/"));
        }
      };
      await walk(root);
      return out.sort();
    },
    async runCommand(argv) {
      if (!isAllowedCommand(argv, o.allowlist)) {
        throw new DomainError(
          "FORBIDDEN",
          `command ${JSON.stringify(argv[0] ?? "")} is not on the allowlist (${o.allowlist.join(", ")})`,
        );
      }
      return ws.run({ argv, timeoutMs: o.commandTimeoutMs, ...(o.signal ? { signal: o.signal } : {}) });
    },
  };
}
