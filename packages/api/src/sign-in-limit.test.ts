import { describe, expect, it } from "vitest";
import { AttemptLog, clientAddress, waitFor } from "./sign-in-limit.ts";

const limit = { max: 3, windowMs: 60_000 };

describe("AttemptLog: attempts per key in a rolling window", () => {
  it("blocks at the limit until the oldest counted attempt leaves the window", () => {
    const log = new AttemptLog(limit);
    for (const at of [0, 10_000, 20_000]) {
      expect(log.blockedUntil("a", at)).toBeNull();
      log.record("a", at);
    }
    expect(log.blockedUntil("a", 30_000)).toBe(60_000);
    expect(log.blockedUntil("b", 30_000)).toBeNull();
    expect(log.blockedUntil("a", 59_999)).toBe(60_000);
    expect(log.blockedUntil("a", 60_000)).toBeNull();
    log.record("a", 60_000);
    expect(log.blockedUntil("a", 60_001)).toBe(70_000);
  });

  it("takes back one attempt, or clears a key", () => {
    const log = new AttemptLog(limit);
    for (const at of [0, 1, 2]) log.record("a", at);
    log.forget("a", 1);
    expect(log.blockedUntil("a", 3)).toBeNull();
    log.record("a", 3);
    expect(log.blockedUntil("a", 4)).toBe(60_000);
    log.clear("a");
    expect(log.blockedUntil("a", 4)).toBeNull();
  });

  it("keeps at most maxKeys keys, dropping the least recently used", () => {
    const log = new AttemptLog({ max: 1, windowMs: 60_000 }, 2);
    log.record("a", 0);
    log.record("b", 0);
    log.record("a", 1);
    log.record("c", 2);
    expect(log.blockedUntil("a", 3)).not.toBeNull();
    expect(log.blockedUntil("b", 3)).toBeNull();
    expect(log.blockedUntil("c", 3)).not.toBeNull();
  });
});

describe("clientAddress: the address the nearest proxy saw", () => {
  const from = (h: Record<string, string>) => clientAddress(new Headers(h));
  it("reads the last X-Forwarded-For entry, whatever a client put before it", () => {
    expect(from({ "x-forwarded-for": "203.0.113.7" })).toBe("203.0.113.7");
    expect(from({ "x-forwarded-for": "1.2.3.4, 10.0.0.1,203.0.113.7" })).toBe("203.0.113.7");
    expect(from({ "x-forwarded-for": "::ffff:127.0.0.1" })).toBe("127.0.0.1");
    expect(from({ "x-real-ip": "198.51.100.2" })).toBe("198.51.100.2");
  });

  it("counts IPv6 per /64, and knows no address when there is none or it is not one", () => {
    expect(from({ "x-forwarded-for": "2001:db8:1:2:aaaa::1" })).toBe("2001:db8:1:2::/64");
    expect(from({ "x-forwarded-for": "2001:db8:1:2:bbbb:cccc:dddd:eeee" })).toBe("2001:db8:1:2::/64");
    expect(from({ "x-forwarded-for": "[2001:db8::5]" })).toBe("2001:db8:0:0::/64");
    expect(from({ "x-forwarded-for": "::1" })).toBe("0:0:0:0::/64");
    expect(from({})).toBeNull();
    expect(from({ "x-forwarded-for": "unknown" })).toBeNull();
    expect(clientAddress(undefined)).toBeNull();
  });
});

describe("waitFor", () => {
  it("says how long, rounded up", () => {
    expect(waitFor(900_000, 0)).toBe("15 minutes");
    expect(waitFor(60_000, 1)).toBe("1 minute");
    expect(waitFor(30_000, 0)).toBe("30 seconds");
    expect(waitFor(1_000, 0)).toBe("1 second");
    expect(waitFor(0, 0)).toBe("1 second");
  });
});
