import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DomainError } from "@rhumbatron/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LEFTOVER_MS, SetupCache, type SetupCacheKeyInput, setupCacheKey } from "./setup-cache.ts";

let base: string;
let n = 0;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "rhumbatron-setup-cache-"));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** A fresh folder under the test's temp dir. */
async function fresh(label: string): Promise<string> {
  const dir = join(base, `${label}-${++n}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** A clock that moves one second per call, so entries order by use without sleeping. */
function clock(): () => Date {
  let t = Date.parse("2026-01-01T00:00:00Z");
  return () => {
    t += 1000;
    return new Date(t);
  };
}

async function put(root: string, rel: string, content: string, mode = 0o644): Promise<void> {
  const p = join(root, rel);
  await mkdir(dirname(p), { recursive: true });
  await writeFile(p, content);
  await chmod(p, mode);
}

/** Every entry under `dir/rel`: path, kind, mode bits, and content or link target. */
async function tree(dir: string, rel: string): Promise<string[]> {
  const st = await lstat(join(dir, rel));
  const mode = (st.mode & 0o7777).toString(8);
  if (st.isSymbolicLink()) return [`${rel} link ${await readlink(join(dir, rel))}`];
  if (st.isFile()) return [`${rel} file ${mode} ${await readFile(join(dir, rel), "utf8")}`];
  const out = [`${rel} dir ${mode}`];
  for (const name of (await readdir(join(dir, rel))).sort()) out.push(...(await tree(dir, `${rel}/${name}`)));
  return out;
}

async function listing(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}

function key(i: number): string {
  return setupCacheKey({ stepId: "install", argv: ["npm", "ci"], keyFiles: [], toolchain: { i: String(i) } });
}

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return (err as DomainError).code;
}

describe("setupCacheKey", () => {
  const enc = new TextEncoder();
  const input: SetupCacheKeyInput = {
    stepId: "install",
    argv: ["npm", "ci", "--no-audit"],
    keyFiles: [
      { path: "package-lock.json", bytes: enc.encode('{"lockfileVersion":3}') },
      { path: ".npmrc", bytes: null },
    ],
    toolchain: { node: "v20.11.1", npm: "10.2.4" },
  };
  const k = setupCacheKey(input);

  it("is a sha256 hex, the same for the same content whatever the order of files and tools", () => {
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(setupCacheKey({ ...input })).toBe(k);
    expect(
      setupCacheKey({
        ...input,
        keyFiles: [...input.keyFiles].reverse(),
        toolchain: { npm: "10.2.4", node: "v20.11.1" },
      }),
    ).toBe(k);
  });

  it("changes with the lockfile's bytes, the argv, the toolchain, the step id", () => {
    const lock = (s: string) => [
      { path: "package-lock.json", bytes: enc.encode(s) },
      { path: ".npmrc", bytes: null },
    ];
    const others = [
      setupCacheKey({ ...input, keyFiles: lock('{"lockfileVersion":2}') }),
      setupCacheKey({ ...input, argv: ["npm", "ci"] }),
      setupCacheKey({ ...input, argv: ["npm", "ci --no-audit"] }),
      setupCacheKey({ ...input, toolchain: { node: "v20.12.0", npm: "10.2.4" } }),
      setupCacheKey({ ...input, toolchain: { node: "v20.11.1" } }),
      setupCacheKey({ ...input, stepId: "install2" }),
    ];
    expect(new Set([k, ...others]).size).toBe(others.length + 1);
  });

  it("tells a missing key file from an empty one", () => {
    const missing = setupCacheKey({ ...input, keyFiles: [{ path: "package-lock.json", bytes: null }] });
    const empty = setupCacheKey({ ...input, keyFiles: [{ path: "package-lock.json", bytes: new Uint8Array() }] });
    const none = setupCacheKey({ ...input, keyFiles: [] });
    expect(new Set([missing, empty, none]).size).toBe(3);
  });
});

describe("SetupCache", () => {
  /** A workspace as `npm ci` leaves it: modes, a bin symlink inside, nested folders. */
  async function installed(): Promise<string> {
    const ws = await fresh("ws");
    await put(ws, "package-lock.json", "{}");
    await put(ws, "node_modules/left-pad/index.js", "module.exports = 1;\n");
    await put(ws, "node_modules/left-pad/bin/pad", "#!/usr/bin/env node\n", 0o755);
    await put(ws, "node_modules/left-pad/secret", "x", 0o600);
    await mkdir(join(ws, "node_modules/.bin"));
    await symlink("../left-pad/bin/pad", join(ws, "node_modules/.bin/pad"));
    await mkdir(join(ws, "node_modules/empty"));
    await chmod(join(ws, "node_modules/empty"), 0o750);
    await put(ws, "packages/app/dist/out.txt", "built");
    return ws;
  }

  it("restores into a fresh workspace the same tree it saved, replacing what was there; a missing path is reported", async () => {
    const root = await fresh("root");
    const cache = new SetupCache({ root, maxBytes: 1_000_000, now: clock() });
    const ws = await installed();
    const k = key(1);
    expect(await cache.restore(k, ws)).toBeNull();

    const saved = await cache.save(k, ws, ["node_modules/", "./packages/app/dist", "coverage"]);
    expect(saved).toMatchObject({
      saved: ["node_modules", "packages/app/dist"],
      missing: ["coverage"],
      kept: true,
      evicted: [],
    });
    // File sizes plus the link's target length.
    expect(saved.bytes).toBe(
      "module.exports = 1;\n".length + "#!/usr/bin/env node\n".length + 1 + "../left-pad/bin/pad".length + 5,
    );
    expect(await cache.usage()).toEqual({ entries: 1, bytes: saved.bytes });

    const other = await fresh("ws");
    await put(other, "node_modules/stale/index.js", "old");
    const restored = await cache.restore(k, other);
    expect(restored).toEqual({ paths: ["node_modules", "packages/app/dist"], bytes: saved.bytes });
    for (const p of ["node_modules", "packages/app/dist"]) expect(await tree(other, p)).toEqual(await tree(ws, p));
    expect(await tree(other, "node_modules")).not.toContain("node_modules/stale/index.js file 644 old");
    expect(await readFile(join(other, "node_modules/.bin/pad"), "utf8")).toBe("#!/usr/bin/env node\n");
    expect(await listing(root)).toEqual([k]);
  });

  it("gives a copy, never a hard link: writing into a restored file leaves the entry as it was", async () => {
    const root = await fresh("root");
    const cache = new SetupCache({ root, maxBytes: 1_000_000, now: clock() });
    const ws = await installed();
    const k = key(2);
    await cache.save(k, ws, ["node_modules"]);
    const one = await fresh("ws");
    await cache.restore(k, one);

    const file = "node_modules/left-pad/index.js";
    const restored = await lstat(join(one, file));
    const cached = await lstat(join(root, k, "data", file));
    const source = await lstat(join(ws, file));
    expect(restored.ino).not.toBe(cached.ino);
    expect(cached.ino).not.toBe(source.ino);
    expect(restored.nlink).toBe(1);
    expect(cached.nlink).toBe(1);

    await writeFile(join(one, file), "tampered");
    await writeFile(join(one, "node_modules/.bin/pad"), "tampered through the link");
    expect(await readFile(join(root, k, "data", file), "utf8")).toBe("module.exports = 1;\n");
    const two = await fresh("ws");
    await cache.restore(k, two);
    expect(await tree(two, "node_modules")).toEqual(await tree(ws, "node_modules"));
  });

  it("evicts the oldest-used entries first, never the one just saved", async () => {
    const root = await fresh("root");
    const cache = new SetupCache({ root, maxBytes: 250, now: clock() });
    const ws = await fresh("ws");
    await put(ws, "out/blob", "x".repeat(100));
    const [a, b, c] = [key(10), key(11), key(12)];
    expect((await cache.save(a, ws, ["out"])).evicted).toEqual([]);
    expect((await cache.save(b, ws, ["out"])).evicted).toEqual([]);
    expect(await cache.restore(a, await fresh("ws"))).not.toBeNull(); // a is now used after b
    expect(await cache.save(c, ws, ["out"])).toMatchObject({ kept: true, bytes: 100, evicted: [b] });
    expect(await cache.usage()).toEqual({ entries: 2, bytes: 200 });
    expect(await cache.restore(b, await fresh("ws"))).toBeNull();
    expect(await cache.restore(a, await fresh("ws"))).not.toBeNull();
    expect(await cache.restore(c, await fresh("ws"))).not.toBeNull();
    expect(await listing(root)).toEqual([a, c].sort());
  });

  it("does not keep an entry larger than the whole cache, and evicts nothing for it", async () => {
    const root = await fresh("root");
    const cache = new SetupCache({ root, maxBytes: 150, now: clock() });
    const ws = await fresh("ws");
    await put(ws, "small/f", "x".repeat(100));
    await put(ws, "big/f", "x".repeat(151));
    await cache.save(key(20), ws, ["small"]);
    expect(await cache.save(key(21), ws, ["big"])).toEqual({
      saved: ["big"],
      missing: [],
      bytes: 151,
      kept: false,
      evicted: [],
    });
    expect(await cache.restore(key(21), await fresh("ws"))).toBeNull();
    expect(await cache.usage()).toEqual({ entries: 1, bytes: 100 });
    expect(await listing(root)).toEqual([key(20)]);
  });

  it("keeps one entry when the same key is saved twice at once", async () => {
    const root = await fresh("root");
    const cache = new SetupCache({ root, maxBytes: 1_000_000, now: clock() });
    const ws = await installed();
    const results = await Promise.all([1, 2, 3].map(() => cache.save(key(30), ws, ["node_modules"])));
    expect(results.every((r) => r.kept)).toBe(true);
    expect(await listing(root)).toEqual([key(30)]);
    const other = await fresh("ws");
    await cache.restore(key(30), other);
    expect(await tree(other, "node_modules")).toEqual(await tree(ws, "node_modules"));
  });

  it("refuses paths that leave the workspace, overlap, or are not paths", async () => {
    const root = await fresh("root");
    const cache = new SetupCache({ root, maxBytes: 1_000_000, now: clock() });
    const ws = await installed();
    for (const p of ["../x", "/etc", "node_modules/../../x", "", ".", "./"]) {
      expect(await refusal(cache.save(key(40), ws, [p]))).toBe("INVALID_INPUT");
    }
    expect(await refusal(cache.save(key(40), ws, ["node_modules", "node_modules/left-pad"]))).toBe("INVALID_INPUT");
    expect(await refusal(cache.save("../evil", ws, ["node_modules"]))).toBe("INVALID_INPUT");
    expect(await refusal(cache.restore("../evil", ws))).toBe("INVALID_INPUT");
    expect(await listing(root).catch(() => [])).toEqual([]);
  });

  it("refuses to save a symlink that leads out of the workspace, however it gets there", async () => {
    const root = await fresh("root");
    const cache = new SetupCache({ root, maxBytes: 1_000_000, now: clock() });
    const outside = await fresh("outside");
    await put(outside, "secret", "host secret");
    const cases: [string, string][] = [
      ["node_modules/evil", "../../outside/secret"],
      ["node_modules/evil", "/etc/passwd"],
      ["node_modules/evil", join(outside, "secret")],
    ];
    for (const [at, target] of cases) {
      const ws = await installed();
      await symlink(target, join(ws, at));
      expect(await refusal(cache.save(key(50), ws, ["node_modules"]))).toBe("FORBIDDEN");
    }
    // Lexically inside (node_modules/self/self/../.. is node_modules), really two levels up.
    const ws = await installed();
    await symlink(".", join(ws, "node_modules/self"));
    await symlink("self/self/../..", join(ws, "node_modules/up"));
    expect(await refusal(cache.save(key(50), ws, ["node_modules"]))).toBe("FORBIDDEN");
    // A folder on the way that is a symlink.
    const ws2 = await installed();
    await symlink(outside, join(ws2, "linked"));
    expect(await refusal(cache.save(key(50), ws2, ["linked/secret"]))).toBe("FORBIDDEN");

    expect(await listing(root)).toEqual([]);
    expect(await readFile(join(outside, "secret"), "utf8")).toBe("host secret");
  });

  it("restores without following a symlink in the workspace out of it", async () => {
    const root = await fresh("root");
    const cache = new SetupCache({ root, maxBytes: 1_000_000, now: clock() });
    const ws = await installed();
    await cache.save(key(60), ws, ["node_modules", "packages/app/dist"]);
    const outside = await fresh("outside");
    await put(outside, "keep", "untouched");

    const target = await fresh("ws");
    await symlink(outside, join(target, "node_modules"));
    expect(await cache.restore(key(60), target)).not.toBeNull();
    expect((await lstat(join(target, "node_modules"))).isDirectory()).toBe(true);
    expect(await listing(outside)).toEqual(["keep"]);

    const through = await fresh("ws");
    await symlink(outside, join(through, "packages"));
    expect(await refusal(cache.restore(key(60), through))).toBe("FORBIDDEN");
    expect(await listing(outside)).toEqual(["keep"]);
    expect(await readFile(join(outside, "keep"), "utf8")).toBe("untouched");
  });

  it("treats a half-written or damaged entry as a miss and removes it", async () => {
    const root = await fresh("root");
    const cache = new SetupCache({ root, maxBytes: 1_000_000, now: clock() });
    const half = key(70);
    await put(root, `${half}/data/node_modules/x.js`, "half");
    const bad = key(71);
    await put(root, `${bad}/data/node_modules/x.js`, "bad");
    await put(root, `${bad}/meta.json`, "{not json");
    expect(await cache.usage()).toEqual({ entries: 0, bytes: 0 });

    const ws = await fresh("ws");
    expect(await cache.restore(half, ws)).toBeNull();
    expect(await cache.restore(bad, ws)).toBeNull();
    expect(await listing(root)).toEqual([]);
    expect(await listing(ws)).toEqual([]);

    // A save over a damaged entry replaces it.
    await put(root, `${half}/data/junk`, "half");
    const src = await installed();
    expect((await cache.save(half, src, ["node_modules"])).kept).toBe(true);
    expect(await cache.restore(half, ws)).toMatchObject({ paths: ["node_modules"] });
    expect(await tree(ws, "node_modules")).toEqual(await tree(src, "node_modules"));
  });

  it("deletes what a worker killed mid-save or mid-removal left behind, once it is old, and never a save in flight", async () => {
    const root = await fresh("root");
    const now = new Date("2026-12-04T12:00:00Z");
    const cache = new SetupCache({ root, maxBytes: 1_000_000, now: () => now });
    const old = new Date(now.getTime() - LEFTOVER_MS - 1000);
    const deadTmp = ".tmp-00000000-0000-4000-8000-000000000001";
    const deadTrash = ".trash-00000000-0000-4000-8000-000000000002";
    const inFlight = ".tmp-00000000-0000-4000-8000-000000000003";
    await put(root, `${deadTmp}/data/node_modules/x.js`, "half a copy");
    await put(root, `${deadTrash}/data/node_modules/y.js`, "half a removal");
    await put(root, `${inFlight}/data/node_modules/z.js`, "another worker's save");
    for (const d of [deadTmp, deadTrash]) await utimes(join(root, d), old, old);
    // Not the cache's: a name that only looks like one is left alone.
    await put(root, ".tmp-notes", "kept");
    await utimes(join(root, ".tmp-notes"), old, old);

    expect((await cache.save(key(80), await installed(), ["node_modules"])).kept).toBe(true);
    expect(await listing(root)).toEqual([".tmp-notes", inFlight, key(80)].sort());
    expect(await cache.usage()).toMatchObject({ entries: 1 });
  });
});
