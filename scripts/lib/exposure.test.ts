import { DEV_AUTH_SECRET, parseSettings } from "@rhumbatron/core";
import { describe, expect, it } from "vitest";
import { exposureRefusal, isLoopbackHost } from "./exposure.ts";

const SECRET = "a-real-secret-of-at-least-32-characters!";

describe("closed by default", () => {
  it("listens on 127.0.0.1 unless HOST says otherwise", () => {
    expect(parseSettings({}).HOST).toBe("127.0.0.1");
    expect(parseSettings({ HOST: "" }).HOST).toBe("127.0.0.1");
    expect(parseSettings({ HOST: "0.0.0.0" }).HOST).toBe("0.0.0.0");
  });

  it("knows which addresses only this machine reaches", () => {
    for (const h of [
      "127.0.0.1",
      "127.1.2.3",
      "localhost",
      "LOCALHOST",
      "::1",
      "[::1]",
      "0:0:0:0:0:0:0:1",
      "::ffff:127.0.0.1",
    ])
      expect(isLoopbackHost(h), h).toBe(true);
    for (const h of [
      "0.0.0.0",
      "::",
      "10.0.0.5",
      "192.168.1.2",
      "example.com",
      "fe80::1",
      "::ffff:10.0.0.1",
      "128.0.0.1",
    ])
      expect(isLoopbackHost(h), h).toBe(false);
  });

  it("runs dev on loopback with the development secret, and anything with a secret of its own", () => {
    expect(exposureRefusal(parseSettings({}))).toBeNull();
    expect(exposureRefusal(parseSettings({ HOST: "localhost" }))).toBeNull();
    expect(exposureRefusal(parseSettings({ HOST: "0.0.0.0", RHUMBATRON_AUTH_SECRET: SECRET }))).toBeNull();
    expect(
      exposureRefusal(parseSettings({ RHUMBATRON_ENV: "prod", HOST: "::", RHUMBATRON_AUTH_SECRET: SECRET })),
    ).toBeNull();
  });

  it("refuses prod without a secret, or with the public development secret", () => {
    for (const secret of [undefined, DEV_AUTH_SECRET]) {
      const why = exposureRefusal({ RHUMBATRON_ENV: "prod", HOST: "127.0.0.1", RHUMBATRON_AUTH_SECRET: secret });
      expect(why).toMatch(/^RHUMBATRON_ENV=prod needs a secret of its own in RHUMBATRON_AUTH_SECRET/);
    }
    // The settings parser refuses both as well, so the web app and the worker never run so either.
    expect(() => parseSettings({ RHUMBATRON_ENV: "prod" })).toThrow(/RHUMBATRON_AUTH_SECRET is required/);
    expect(() => parseSettings({ RHUMBATRON_ENV: "prod", RHUMBATRON_AUTH_SECRET: DEV_AUTH_SECRET })).toThrow(
      /must not be the public development secret/,
    );
  });

  it("refuses an address other machines reach while the development secret is in use", () => {
    for (const HOST of ["0.0.0.0", "::", "192.168.1.2", "rhumbatron.example.com"]) {
      for (const secret of [undefined, DEV_AUTH_SECRET]) {
        expect(exposureRefusal({ RHUMBATRON_ENV: "dev", HOST, RHUMBATRON_AUTH_SECRET: secret })).toBe(
          `HOST=${HOST} lets other machines reach Rhumbatron, but sessions are signed with the public development secret; ` +
            "set RHUMBATRON_AUTH_SECRET (`openssl rand -base64 32`) and RHUMBATRON_PUBLIC_URL, or unset HOST to listen on 127.0.0.1 only",
        );
      }
    }
  });
});
