import { lstat, mkdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { type AgentTools, DomainError, isAllowedCommand, type SandboxWorkspace } from "@rhumbatron/core";

/**
 * What list_files answers from (docs/agents.md, Context Packets): the paths of the base tree's file index,
 * plus `overlay`, paths the workspace may have changed since that tree (the ChangeSets stacked
 * before the run's work). Paths the Agent writes or deletes join the overlay as it works; each
 * overlay path is listed when it exists in the workspace. Nothing walks the repository, so files a
 * command makes (build output, caches) are not listed; the Agent reads those by name.
 */
export interface FileListing {
  paths: readonly string[];
  overlay?: readonly string[];
}

/**
 * The tools an Agent may call, bound to one workspace. Every path must stay inside the run
 * directory: absolute paths, `..`, the `.git` folder and symlinks that lead out are refused.
 * Commands go through the Sandbox and must be on the project's allowlist.
 */
export function workspaceTools(
  ws: SandboxWorkspace,
  o: { allowlist: string[]; commandTimeoutMs: number; signal?: AbortSignal; listing: FileListing },
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
  const touched = new Set(o.listing.overlay ?? []);
  const touch = (full: string) => touched.add(relative(root, full).split(sep).join("/"));
  const exists = (full: string) =>
    lstat(full).then(
      (st) => !st.isDirectory(),
      () => false,
    );

  return {
    async readFile(path) {
      return readFile(await inside(path), "utf8");
    },
    async writeFile(path, content) {
      const full = await inside(path);
      await mkdir(dirname(full), { recursive: true });
      touch(full);
      await writeFile(full, content);
    },
    async deleteFile(path) {
      const full = await inside(path);
      touch(full);
      await rm(full, { force: true });
    },
    async listFiles() {
      const out = new Set(o.listing.paths);
      for (const p of touched) {
        if (await exists(resolve(root, p))) out.add(p);
        else out.delete(p);
      }
      return [...out].sort();
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
