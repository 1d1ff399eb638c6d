import { createLogger } from "@rhumbatron/worker";
import { describe, expect, it } from "vitest";
import { webLines, workerLines } from "./log-lines.ts";

/** A real line of the worker's own logger. */
function pinoLine(level: "info" | "error", msg: string, fields: Record<string, unknown>): string {
  let out = "";
  const logger = createLogger("info", { write: (s: string) => (out += s) });
  logger[level](fields, msg);
  return out.trimEnd();
}

describe("what npm start prints of the worker", () => {
  it("turns pino's JSON into one readable line with the time, level, message and fields", () => {
    const line = pinoLine("error", "run failed", { function: "outbox-publisher", durationMs: 12 });
    const shown = workerLines({})(line);
    expect(shown).toMatch(/^\[\d{2}:\d{2}:\d{2}\] ERROR: run failed /);
    expect(shown).toContain('"function":"outbox-publisher"');
    expect(shown).not.toContain("rhumbatron-worker");
    expect(shown).not.toContain("\n");
  });

  it("keeps the JSON with LOG_FORMAT=json, and passes through what is not JSON", () => {
    const line = pinoLine("info", "listening", { port: 1 });
    expect(workerLines({ LOG_FORMAT: "json" })(line)).toBe(line);
    expect(workerLines({})("plain text from a tool")).toBe("plain text from a tool");
    expect(workerLines({})("{ not json")).toBe("{ not json");
  });
});

describe("what npm start prints of the web app", () => {
  const chatter = [
    " ○ Compiling /projects/[projectId] ...",
    " ✓ Compiled /api/trpc in 2.3s",
    " GET /api/health 200 in 12ms",
  ];
  const kept = [" ✓ Ready in 812ms", " ⚠ Invalid next.config.ts options detected", "Error: boom"];

  it("drops Turbopack's compile lines and the request log by default", () => {
    const f = webLines({});
    for (const line of chatter) expect(f(line)).toBeNull();
    for (const line of kept) expect(f(line)).toBe(line);
  });

  it("shows everything with LOG_LEVEL=debug", () => {
    const f = webLines({ LOG_LEVEL: "debug" });
    for (const line of [...chatter, ...kept]) expect(f(line)).toBe(line);
  });
});
