import { execFile } from "node:child_process";
import type { Stats } from "node:fs";
import { lstat, mkdir, readdir, readFile, readlink, realpath, rm } from "node:fs/promises";
import { join, posix, relative, sep } from "node:path";
import { DomainError } from "@rhumbatron/core";
import { SYSTEM_PATH } from "./workspace.ts";

export interface Meta {
  version: 1;
  key: string;
  paths: string[];
  bytes: number;
  createdAt: string;
  lastUsedAt: string;
}
export const KEY = /^[0-9a-f]{64}$/;
export const META = "meta.json";

// The setup cache's work on files (setup-cache.ts): keys, paths, copies and their measure.

export function checkKey(key: string): void {
  if (!KEY.test(key)) throw new DomainError("INVALID_INPUT", `not a setup cache key: ${JSON.stringify(key)}`);
}

/** A path as a checks file gives it, normalised (`./a/` is `a`); absolute, `..`, empty and `.` are refused. */
export function cachePath(p: string): string {
  const parts = p.split("/").filter((s) => s !== "" && s !== ".");
  if (p.startsWith("/") || p.includes("\0") || parts.includes("..") || parts.length === 0) {
    throw new DomainError(
      "INVALID_INPUT",
      `a cache path is relative, inside the workspace, no ..: ${JSON.stringify(p)}`,
    );
  }
  return parts.join("/");
}

/** Normalised, without duplicates; one path inside another is refused (restoring both would replace one with the other). */
export function normalisePaths(paths: readonly string[]): string[] {
  const out = [...new Set(paths.map(cachePath))];
  for (const a of out) {
    for (const b of out) {
      if (a !== b && b.startsWith(`${a}/`)) {
        throw new DomainError(
          "INVALID_INPUT",
          `cache paths overlap: ${JSON.stringify(a)} contains ${JSON.stringify(b)}`,
        );
      }
    }
  }
  return out;
}

export async function lstatOrNull(p: string): Promise<Stats | null> {
  return lstat(p).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT" || err.code === "ENOTDIR") return null;
    throw err;
  });
}

export async function exists(p: string): Promise<boolean> {
  return (await lstatOrNull(p)) !== null;
}

/** Whether `rel` exists in the workspace; every folder on the way must be a real folder, not a symlink. */
export async function sourceKind(ws: string, rel: string): Promise<"missing" | "present"> {
  const parts = rel.split("/");
  let at = ws;
  for (const [i, part] of parts.entries()) {
    at = join(at, part);
    const st = await lstatOrNull(at);
    if (!st) return "missing";
    if (i < parts.length - 1 && !st.isDirectory()) {
      if (st.isSymbolicLink()) {
        throw new DomainError("FORBIDDEN", `cache path ${JSON.stringify(rel)} goes through a symlink`);
      }
      return "missing";
    }
  }
  return "present";
}

/**
 * Makes `<ws>/<rel>` free for a restore: every folder on the way must be a real folder (missing ones
 * are created), and whatever is at the path itself is removed without following it.
 */
export async function prepareDestination(ws: string, rel: string): Promise<void> {
  const parts = rel.split("/");
  let at = ws;
  for (const part of parts.slice(0, -1)) {
    at = join(at, part);
    const st = await lstatOrNull(at);
    if (!st) {
      await mkdir(at);
      continue;
    }
    if (!st.isDirectory()) {
      throw new DomainError(
        "FORBIDDEN",
        `cannot restore ${JSON.stringify(rel)}: ${JSON.stringify(relative(ws, at))} is not a folder in the workspace`,
      );
    }
  }
  await rm(join(ws, rel), { recursive: true, force: true });
}

/**
 * Bytes under `base/rel`: file sizes (a file hard-linked several times inside counts once) and
 * symlinks as their target's length; each symlink is handed to `onLink` with its workspace-relative path.
 */
export async function measure(
  base: string,
  rel: string,
  onLink: (rel: string, target: string) => Promise<void>,
  seen: Set<string>,
): Promise<number> {
  const st = await lstat(join(base, rel));
  if (st.isSymbolicLink()) {
    const target = await readlink(join(base, rel));
    await onLink(rel, target);
    return Buffer.byteLength(target);
  }
  if (st.isFile()) {
    if (st.nlink > 1) {
      const id = `${st.dev}:${st.ino}`;
      if (seen.has(id)) return 0;
      seen.add(id);
    }
    return st.size;
  }
  if (!st.isDirectory()) return 0;
  let total = 0;
  for (const name of await readdir(join(base, rel))) {
    total += await measure(base, `${rel}/${name}`, onLink, seen);
  }
  return total;
}

/**
 * A saved symlink must stay inside the workspace wherever it is restored: its target relative, not
 * leading out when resolved from where it sits, and (resolved on the host, through any other links)
 * not landing outside the workspace now.
 */
export async function checkLink(ws: string, wsReal: string, rel: string, target: string): Promise<void> {
  const refuse = (why: string) =>
    new DomainError("FORBIDDEN", `cannot cache ${JSON.stringify(rel)}: a symlink to ${JSON.stringify(target)} ${why}`);
  if (target.startsWith("/")) throw refuse("(absolute) would lead out of the workspace it is restored into");
  const lexical = posix.normalize(posix.join(posix.dirname(rel), target));
  if (lexical === ".." || lexical.startsWith("../")) throw refuse("leads out of the workspace");
  const real = await realpath(join(ws, rel)).catch(() => null);
  if (real !== null && real !== wsReal && !real.startsWith(`${wsReal}${sep}`)) {
    throw refuse("leads out of the workspace");
  }
}

export async function readMeta(entry: string, key: string): Promise<Meta | null> {
  try {
    const m = JSON.parse(await readFile(join(entry, META), "utf8")) as Partial<Meta>;
    const ok =
      m.version === 1 &&
      m.key === key &&
      Array.isArray(m.paths) &&
      m.paths.every((p) => typeof p === "string") &&
      typeof m.bytes === "number" &&
      typeof m.createdAt === "string" &&
      typeof m.lastUsedAt === "string";
    return ok ? (m as Meta) : null;
  } catch {
    return null;
  }
}

/** `cp -a --reflink=auto from to` (GNU cp): symlinks stay symlinks, modes and times kept, never hard links to the source. */
export function cp(from: string, to: string): Promise<void> {
  return new Promise<void>((done, fail) =>
    execFile(
      "cp",
      ["-a", "--reflink=auto", "--", from, to],
      { env: { PATH: SYSTEM_PATH.join(":") } as unknown as NodeJS.ProcessEnv },
      (err, _o, e) =>
        err ? fail(new DomainError("UNAVAILABLE", `setup cache copy failed: ${e.trim() || err.message}`)) : done(),
    ),
  );
}
