import { loadConfig, scriptedProvider } from "@rhumbatron/core";
import { localFolderBlobStore } from "@rhumbatron/db";
import { pgNotifyNudger } from "@rhumbatron/runtime";
import { describe, expect, it } from "vitest";
import { buildFunctions, functionsForHost, placeFunctions, SANDBOX_FUNCTIONS, WORKER_HOST_FUNCTIONS } from "./index.ts";

const config = loadConfig("dev");
const blobs = localFolderBlobStore("/nonexistent/blobs");
// The registry only keeps these references; nothing here is called.
const host = {
  db: {} as never,
  source: {} as never,
  sandbox: {} as never,
  provider: scriptedProvider,
  allowlist: [],
  releaseRoot: "/nonexistent/releases",
  browserCheck: async () => {
    throw new Error("not called");
  },
};

describe("where each function is served (RHUMBATRON_FUNCTION_HOST=split)", () => {
  it("puts every function on exactly one host, and the web's share needs no Sandbox or source store", () => {
    const all = buildFunctions({ config, nudger: pgNotifyNudger, blobs, ...host }).map((f) => f.id);
    const worker = functionsForHost(buildFunctions({ config, nudger: pgNotifyNudger, blobs, ...host }), "worker").map(
      (f) => f.id,
    );
    // The web app builds the registry without source deps and serves what is not the worker's.
    const web = functionsForHost(buildFunctions({ config, nudger: pgNotifyNudger, blobs }), "web").map((f) => f.id);
    expect([...worker, ...web].sort()).toEqual([...all].sort());
    expect(worker.filter((id) => web.includes(id))).toEqual([]);
    expect(worker.sort()).toEqual(all.filter((id) => WORKER_HOST_FUNCTIONS.has(id)).sort());
    expect(web).toContain("outbox-publisher");
    expect(worker).toContain("agent-runner");
    expect(functionsForHost(buildFunctions({ config, nudger: pgNotifyNudger, blobs, ...host }), "all")).toHaveLength(
      all.length,
    );
  });
});

describe("placement: a worker whose Sandbox refuses commands", () => {
  it("claims no Agent run and no verification, and still does the rest of its share", () => {
    const all = buildFunctions({ config, nudger: pgNotifyNudger, blobs, ...host });
    const ids = (fns: { id: string }[]) => fns.map((f) => f.id).sort();
    expect(ids(placeFunctions(all, true))).toEqual(ids(all));
    const without = ids(placeFunctions(all, false));
    expect(without).not.toContain("agent-runner");
    expect(without).not.toContain("verification-workflow");
    expect(without).toContain("queue-integration");
    // Every function that opens the Sandbox is one the registry has: the set names no stale ID.
    expect([...SANDBOX_FUNCTIONS].every((id) => ids(all).includes(id))).toBe(true);
    expect(without.length).toBe(all.length - SANDBOX_FUNCTIONS.size);
  });
});
