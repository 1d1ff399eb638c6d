import { describe, expect, it } from "vitest";
import { parseSettings } from "./settings.ts";

describe("settings", () => {
  it("has defaults for everything but the database", () => {
    const s = parseSettings({});
    expect(s).toMatchObject({
      PORT: 3000,
      RHUMBATRON_ENV: "dev",
      RHUMBATRON_EXECUTOR: "local",
      RHUMBATRON_DATA_DIR: ".data",
    });
    expect(s.DATABASE_URL).toBeUndefined();
  });

  it("treats empty values as unset", () => {
    expect(parseSettings({ DATABASE_URL: "", PORT: "" }).PORT).toBe(3000);
  });

  it("names the variable and the fix for a malformed DATABASE_URL", () => {
    expect(() => parseSettings({ DATABASE_URL: "mysql://x" })).toThrow(/DATABASE_URL must look like postgresql:\/\//);
    expect(() => parseSettings({ DATABASE_URL: "not a url" })).toThrow(/DATABASE_URL/);
    expect(() => parseSettings({ DATABASE_URL: "postgresql://localhost" })).toThrow(/DATABASE_URL/);
  });

  it("rejects a bad port and an unknown executor", () => {
    expect(() => parseSettings({ PORT: "70000" })).toThrow(/PORT/);
    expect(() => parseSettings({ RHUMBATRON_EXECUTOR: "celery" })).toThrow(/RHUMBATRON_EXECUTOR/);
  });
});
