import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { ExecutorKind } from "@rhumbatron/core";

/** The facts a worker process records in its heartbeat row. */
export interface WorkerIdentity {
  workerId: string;
  executor: ExecutorKind;
  hostname: string;
  pid: number;
  version: string;
  startedAt: Date;
  /** What its Sandbox does (null in tests that run no Sandbox). */
  sandbox: { kind: string; isolates: boolean; note: string | null } | null;
  /** The coding-agent programs installed on its host and mounted in its Sandbox (agents/programs/install.ts). */
  agentPrograms: { name: string; package: string; version: string }[];
}

/** The product version: the root package.json's, so web and worker report the same one. */
export function productVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    version?: unknown;
  };
  return typeof pkg.version === "string" ? pkg.version : "0.0.0";
}

/**
 * A fresh identity per process start. The random suffix matters in containers, where every
 * restart is pid 1 on the same hostname: each process start gets its own heartbeat row.
 */
export function workerIdentity(
  executor: ExecutorKind,
  startedAt: Date,
  sandbox: WorkerIdentity["sandbox"] = null,
  agentPrograms: WorkerIdentity["agentPrograms"] = [],
): WorkerIdentity {
  const host = hostname();
  return {
    workerId: `${host}-${process.pid}-${randomUUID().slice(0, 8)}`,
    executor,
    hostname: host,
    pid: process.pid,
    version: productVersion(),
    startedAt,
    sandbox,
    agentPrograms,
  };
}
