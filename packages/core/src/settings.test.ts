import { describe, expect, it } from "vitest";
import {
  authSecret,
  configFromSettings,
  DEV_AUTH_SECRET,
  DEV_DEMO_PASSWORD,
  demoPassword,
  parseSettings,
  publicUrl,
} from "./settings.ts";

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

  it("reads LOG_LEVEL when RHUMBATRON_LOG_LEVEL is unset, and the project's own name first", () => {
    expect(parseSettings({}).RHUMBATRON_LOG_LEVEL).toBe("info");
    expect(parseSettings({ LOG_LEVEL: "debug" }).RHUMBATRON_LOG_LEVEL).toBe("debug");
    expect(parseSettings({ LOG_LEVEL: "debug", RHUMBATRON_LOG_LEVEL: "warn" }).RHUMBATRON_LOG_LEVEL).toBe("warn");
    expect(() => parseSettings({ LOG_LEVEL: "loud" })).toThrow(/RHUMBATRON_LOG_LEVEL/);
  });

  it("treats empty values as unset", () => {
    expect(parseSettings({ DATABASE_URL: "", PORT: "" }).PORT).toBe(3000);
  });

  it("names the variable and the fix for a malformed DATABASE_URL", () => {
    expect(() => parseSettings({ DATABASE_URL: "mysql://x" })).toThrow(/DATABASE_URL must look like postgresql:\/\//);
    expect(() => parseSettings({ DATABASE_URL: "not a url" })).toThrow(/DATABASE_URL/);
    expect(() => parseSettings({ DATABASE_URL: "postgresql://localhost" })).toThrow(/DATABASE_URL/);
  });

  it("sets the deployment's Sandbox budget from RHUMBATRON_SANDBOX_MONTHLY_SECONDS, keeping the default apart", () => {
    const unset = configFromSettings(parseSettings({ RHUMBATRON_SANDBOX_MONTHLY_SECONDS: "" }));
    expect(unset.sandbox).toMatchObject({ monthlySeconds: 18_000, deploymentMonthlySeconds: null });
    const set = configFromSettings(parseSettings({ RHUMBATRON_SANDBOX_MONTHLY_SECONDS: " 72000 " }));
    expect(set.sandbox).toMatchObject({ monthlySeconds: 18_000, deploymentMonthlySeconds: 72_000 });
    expect(
      configFromSettings(parseSettings({ RHUMBATRON_ENV: "prod", RHUMBATRON_AUTH_SECRET: "x".repeat(32) })).env,
    ).toBe("prod");
    for (const bad of ["0", "-1", "1.5", "lots", "26784001"]) {
      expect(() => parseSettings({ RHUMBATRON_SANDBOX_MONTHLY_SECONDS: bad }), bad).toThrow(
        /^RHUMBATRON_SANDBOX_MONTHLY_SECONDS must be /,
      );
    }
  });

  it("lets webhooks reach private addresses in dev and not in prod, unless RHUMBATRON_WEBHOOK_ALLOW_PRIVATE says", () => {
    const prod = { RHUMBATRON_ENV: "prod", RHUMBATRON_AUTH_SECRET: "x".repeat(32) };
    const allows = (env: Record<string, string>) => configFromSettings(parseSettings(env)).webhooks.allowPrivateTargets;
    expect(allows({})).toBe(true);
    expect(allows(prod)).toBe(false);
    expect(allows({ ...prod, RHUMBATRON_WEBHOOK_ALLOW_PRIVATE: "1" })).toBe(true);
    expect(allows({ RHUMBATRON_WEBHOOK_ALLOW_PRIVATE: "0" })).toBe(false);
    expect(allows({ ...prod, RHUMBATRON_WEBHOOK_ALLOW_PRIVATE: "" })).toBe(false);
    expect(() => parseSettings({ RHUMBATRON_WEBHOOK_ALLOW_PRIVATE: "yes" })).toThrow(
      /^RHUMBATRON_WEBHOOK_ALLOW_PRIVATE must be 1 or 0/,
    );
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

  describe("agent model", () => {
    const url = "http://localhost:8080/v1";

    it("is off by default, with 30 steps, 200000 tokens and a 60 s timeout", () => {
      const s = parseSettings({
        AGENT_MODEL_URL: "",
        AGENT_MODEL_MODEL: "",
        AGENT_MODEL_API_KEY: "",
        AGENT_MODEL_MAX_STEPS: "",
        AGENT_MODEL_MAX_TOKENS: "",
        AGENT_MODEL_TIMEOUT_MS: "",
      });
      expect(s.AGENT_MODEL_URL).toBeUndefined();
      expect(s.AGENT_MODEL_MODEL).toBeUndefined();
      expect(s.AGENT_MODEL_API_KEY).toBeUndefined();
      expect(s).toMatchObject({
        AGENT_MODEL_MAX_STEPS: 30,
        AGENT_MODEL_MAX_TOKENS: 200_000,
        AGENT_MODEL_TIMEOUT_MS: 60_000,
      });
    });

    it("reads a configured endpoint and limits", () => {
      const s = parseSettings({
        AGENT_MODEL_URL: url,
        AGENT_MODEL_MODEL: "qwen2.5-coder-7b",
        AGENT_MODEL_API_KEY: "sk-agent",
        AGENT_MODEL_MAX_STEPS: "12",
        AGENT_MODEL_MAX_TOKENS: "50000",
        AGENT_MODEL_TIMEOUT_MS: "20000",
      });
      expect(s).toMatchObject({
        AGENT_MODEL_URL: url,
        AGENT_MODEL_MODEL: "qwen2.5-coder-7b",
        AGENT_MODEL_API_KEY: "sk-agent",
        AGENT_MODEL_MAX_STEPS: 12,
        AGENT_MODEL_MAX_TOKENS: 50_000,
        AGENT_MODEL_TIMEOUT_MS: 20_000,
      });
    });

    it("requires a model when the URL is set", () => {
      expect(() => parseSettings({ AGENT_MODEL_URL: url })).toThrow(
        /AGENT_MODEL_MODEL is required when AGENT_MODEL_URL is set/,
      );
      expect(() => parseSettings({ AGENT_MODEL_URL: url, AGENT_MODEL_MODEL: "" })).toThrow(
        expect.objectContaining({ code: "INVALID_CONFIG" }),
      );
      expect(parseSettings({ AGENT_MODEL_MODEL: "m" }).AGENT_MODEL_URL).toBeUndefined();
    });

    it("rejects a URL that is not http(s) and limits that are not positive integers", () => {
      expect(() => parseSettings({ AGENT_MODEL_URL: "localhost:8080", AGENT_MODEL_MODEL: "m" })).toThrow(
        /AGENT_MODEL_URL must be an http\(s\) URL/,
      );
      for (const name of ["AGENT_MODEL_MAX_STEPS", "AGENT_MODEL_MAX_TOKENS", "AGENT_MODEL_TIMEOUT_MS"]) {
        for (const bad of ["0", "-5", "1.5", "many"]) {
          expect(() => parseSettings({ [name]: bad })).toThrow(new RegExp(name));
        }
      }
    });
  });

  describe("sign-in", () => {
    const secret = "s".repeat(32);

    it("uses a public dev secret, the dev demo password and localhost:$PORT outside prod", () => {
      const s = parseSettings({ PORT: "3100" });
      expect(authSecret(s)).toBe(DEV_AUTH_SECRET);
      expect(demoPassword(s)).toBe(DEV_DEMO_PASSWORD);
      expect(publicUrl(s)).toBe("http://localhost:3100");
    });

    it("requires RHUMBATRON_AUTH_SECRET in prod, of at least 32 characters", () => {
      expect(() => parseSettings({ RHUMBATRON_ENV: "prod" })).toThrow(
        /RHUMBATRON_AUTH_SECRET is required when RHUMBATRON_ENV=prod/,
      );
      expect(() => parseSettings({ RHUMBATRON_AUTH_SECRET: "short" })).toThrow(
        /RHUMBATRON_AUTH_SECRET must be at least 32/,
      );
      expect(authSecret(parseSettings({ RHUMBATRON_ENV: "prod", RHUMBATRON_AUTH_SECRET: secret }))).toBe(secret);
    });

    it("gives the demo admin no password in prod unless one is configured", () => {
      expect(demoPassword(parseSettings({ RHUMBATRON_ENV: "prod", RHUMBATRON_AUTH_SECRET: secret }))).toBeNull();
      expect(
        demoPassword(
          parseSettings({
            RHUMBATRON_ENV: "prod",
            RHUMBATRON_AUTH_SECRET: secret,
            RHUMBATRON_DEMO_PASSWORD: "chosen-one",
          }),
        ),
      ).toBe("chosen-one");
      expect(() => parseSettings({ RHUMBATRON_DEMO_PASSWORD: "short" })).toThrow(/RHUMBATRON_DEMO_PASSWORD/);
    });

    it("takes RHUMBATRON_PUBLIC_URL as given, without a trailing slash, and refuses a non-http one", () => {
      expect(publicUrl(parseSettings({ RHUMBATRON_PUBLIC_URL: "https://rhumbatron.example.com/" }))).toBe(
        "https://rhumbatron.example.com",
      );
      expect(() => parseSettings({ RHUMBATRON_PUBLIC_URL: "rhumbatron.example.com" })).toThrow(
        /RHUMBATRON_PUBLIC_URL must be an http\(s\) URL/,
      );
    });
  });

  describe("blob store", () => {
    const s3 = {
      RHUMBATRON_BLOB_STORE: "s3",
      RHUMBATRON_S3_ENDPOINT: "https://acct.r2.cloudflarestorage.com",
      RHUMBATRON_S3_BUCKET: "rhumbatron",
      RHUMBATRON_S3_ACCESS_KEY_ID: "AKIDEXAMPLE",
      RHUMBATRON_S3_SECRET_ACCESS_KEY: "secret",
    };

    it("is the local folder by default, and region auto without a prefix when s3 is chosen", () => {
      expect(parseSettings({ RHUMBATRON_BLOB_STORE: "" }).RHUMBATRON_BLOB_STORE).toBe("local");
      const s = parseSettings(s3);
      expect(s).toMatchObject({ ...s3, RHUMBATRON_S3_REGION: "auto" });
      expect(s.RHUMBATRON_S3_PREFIX).toBeUndefined();
      expect(parseSettings({ ...s3, RHUMBATRON_S3_REGION: "eu-west-1", RHUMBATRON_S3_PREFIX: "prod/" })).toMatchObject({
        RHUMBATRON_S3_REGION: "eu-west-1",
        RHUMBATRON_S3_PREFIX: "prod/",
      });
    });

    it("names each missing S3 variable when RHUMBATRON_BLOB_STORE=s3", () => {
      for (const name of Object.keys(s3).filter((k) => k !== "RHUMBATRON_BLOB_STORE")) {
        expect(() => parseSettings({ ...s3, [name]: "" })).toThrow(
          new RegExp(`^${name} is required when RHUMBATRON_BLOB_STORE=s3$`),
        );
      }
      const err = (() => {
        try {
          parseSettings({ RHUMBATRON_BLOB_STORE: "s3" });
        } catch (e) {
          return e as { code: string; details: { issues: string[] } };
        }
      })();
      expect(err?.code).toBe("INVALID_CONFIG");
      expect(err?.details.issues).toHaveLength(4);
      // The local store needs none of them.
      expect(parseSettings({ RHUMBATRON_S3_BUCKET: "" }).RHUMBATRON_BLOB_STORE).toBe("local");
    });

    it("refuses an unknown store, a non-http endpoint and a prefix that is not a folder path", () => {
      expect(() => parseSettings({ RHUMBATRON_BLOB_STORE: "gcs" })).toThrow(/RHUMBATRON_BLOB_STORE/);
      expect(() => parseSettings({ ...s3, RHUMBATRON_S3_ENDPOINT: "acct.r2.cloudflarestorage.com" })).toThrow(
        /RHUMBATRON_S3_ENDPOINT must be an http\(s\) URL/,
      );
      expect(() => parseSettings({ ...s3, RHUMBATRON_S3_PREFIX: "../up" })).toThrow(/RHUMBATRON_S3_PREFIX/);
      expect(() => parseSettings({ ...s3, RHUMBATRON_S3_PREFIX: "a b" })).toThrow(/RHUMBATRON_S3_PREFIX/);
    });
  });
});
