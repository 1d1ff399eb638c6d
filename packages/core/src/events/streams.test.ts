import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import { fnv1a32 } from "./hash.ts";
import { streamForSweep, streamIndex, streamName, streamNames } from "./streams.ts";

describe("streams", () => {
  it("maps a project to fnv1a32(projectId) mod count, always the same stream", () => {
    const id = "proj_6f1c9f8e-0000-4000-8000-000000000001";
    expect(streamIndex(id, 8)).toBe(fnv1a32(id) % 8);
    expect(streamIndex(id, 8)).toBe(streamIndex(id, 8));
    expect(streamIndex("foobar", 8)).toBe(0xbf9cf968 % 8);
  });

  it("spreads projects over every stream", () => {
    const seen = new Set(Array.from({ length: 200 }, (_, i) => streamIndex(`proj_${i}`, 8)));
    expect(seen.size).toBe(8);
  });

  it("names streams rhumbatron_events_NN_env with letters, digits and underscores only", () => {
    expect(streamNames(loadConfig("dev"))).toEqual([
      "rhumbatron_events_00_dev",
      "rhumbatron_events_01_dev",
      "rhumbatron_events_02_dev",
      "rhumbatron_events_03_dev",
      "rhumbatron_events_04_dev",
      "rhumbatron_events_05_dev",
      "rhumbatron_events_06_dev",
      "rhumbatron_events_07_dev",
    ]);
    expect(streamName(3, "prod")).toBe("rhumbatron_events_03_prod");
    expect(() => streamName(1, "dev-eu")).toThrow(/letters, digits and underscores/);
  });

  it("refuses a bad stream count", () => {
    expect(() => streamIndex("p", 0)).toThrow();
  });

  it("sweeps one stream per minute, each every 8 minutes", () => {
    const base = Date.UTC(2026, 0, 1, 0, 0, 0);
    const visited = Array.from({ length: 16 }, (_, m) => streamForSweep(new Date(base + m * 60_000 + 5_000), 8));
    expect(new Set(visited.slice(0, 8)).size).toBe(8);
    expect(visited.slice(8)).toEqual(visited.slice(0, 8));
  });
});
