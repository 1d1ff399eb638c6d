import { describe, expect, it } from "vitest";
import { clientAddress, waitFor } from "./sign-in-limit.ts";

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
