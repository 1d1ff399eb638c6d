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

  describe("overlap classifier", () => {
    const url = "http://localhost:8080/v1";

    it("is off by default, with a 5 s timeout", () => {
      const s = parseSettings({
        OVERLAP_CLASSIFIER_URL: "",
        OVERLAP_CLASSIFIER_MODEL: "",
        OVERLAP_CLASSIFIER_API_KEY: "",
      });
      expect(s.OVERLAP_CLASSIFIER_URL).toBeUndefined();
      expect(s.OVERLAP_CLASSIFIER_MODEL).toBeUndefined();
      expect(s.OVERLAP_CLASSIFIER_API_KEY).toBeUndefined();
      expect(s.OVERLAP_CLASSIFIER_TIMEOUT_MS).toBe(5000);
      expect(parseSettings({ OVERLAP_CLASSIFIER_TIMEOUT_MS: "" }).OVERLAP_CLASSIFIER_TIMEOUT_MS).toBe(5000);
    });

    it("reads a configured endpoint", () => {
      const s = parseSettings({
        OVERLAP_CLASSIFIER_URL: url,
        OVERLAP_CLASSIFIER_MODEL: "qwen2.5-1.5b",
        OVERLAP_CLASSIFIER_API_KEY: "sk-test",
        OVERLAP_CLASSIFIER_TIMEOUT_MS: "1500",
      });
      expect(s).toMatchObject({
        OVERLAP_CLASSIFIER_URL: url,
        OVERLAP_CLASSIFIER_MODEL: "qwen2.5-1.5b",
        OVERLAP_CLASSIFIER_API_KEY: "sk-test",
        OVERLAP_CLASSIFIER_TIMEOUT_MS: 1500,
      });
    });

    it("requires a model when the URL is set", () => {
      expect(() => parseSettings({ OVERLAP_CLASSIFIER_URL: url })).toThrow(
        /OVERLAP_CLASSIFIER_MODEL is required when OVERLAP_CLASSIFIER_URL is set/,
      );
      expect(() => parseSettings({ OVERLAP_CLASSIFIER_URL: url, OVERLAP_CLASSIFIER_MODEL: "" })).toThrow(
        expect.objectContaining({ code: "INVALID_CONFIG" }),
      );
      // A model alone is harmless: without a URL the classifier stays off.
      expect(parseSettings({ OVERLAP_CLASSIFIER_MODEL: "m" }).OVERLAP_CLASSIFIER_URL).toBeUndefined();
    });

    it("rejects a URL that is not http(s) and a timeout that is not a positive integer", () => {
      expect(() => parseSettings({ OVERLAP_CLASSIFIER_URL: "localhost:8080", OVERLAP_CLASSIFIER_MODEL: "m" })).toThrow(
        /OVERLAP_CLASSIFIER_URL must be an http\(s\) URL/,
      );
      expect(() => parseSettings({ OVERLAP_CLASSIFIER_URL: "ftp://host/v1", OVERLAP_CLASSIFIER_MODEL: "m" })).toThrow(
        /OVERLAP_CLASSIFIER_URL/,
      );
      for (const bad of ["0", "-5", "1.5", "soon"]) {
        expect(() => parseSettings({ OVERLAP_CLASSIFIER_TIMEOUT_MS: bad })).toThrow(/OVERLAP_CLASSIFIER_TIMEOUT_MS/);
      }
    });
  });
});
