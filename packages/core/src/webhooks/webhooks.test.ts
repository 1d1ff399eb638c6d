import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";
import { addressKind, webhookAddressProblem, webhookUrlProblem } from "./address.ts";
import { webhookBody, webhookDeliveryId, webhookEventTypesSchema, webhookMaySend } from "./model.ts";
import { signWebhook, verifyWebhookSignature } from "./signature.ts";

describe("where a webhook may point", () => {
  it("tells public addresses from loopback, private, link-local and reserved ones, in IPv4 and IPv6", () => {
    const cases: [string, string | null][] = [
      ["93.184.215.14", "public"],
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["172.32.0.1", "public"],
      ["192.168.1.1", "private"],
      ["100.64.0.1", "private"],
      ["169.254.169.254", "link-local"],
      ["0.0.0.0", "reserved"],
      ["224.0.0.1", "reserved"],
      ["255.255.255.255", "reserved"],
      ["::1", "loopback"],
      ["[::1]", "loopback"],
      ["::", "reserved"],
      ["fe80::1", "link-local"],
      ["fd12:3456::1", "private"],
      ["::ffff:7f00:1", "loopback"],
      ["::ffff:10.0.0.1", "private"],
      ["64:ff9b::a9fe:a9fe", "link-local"],
      ["2001:db8::1", "reserved"],
      ["2606:4700:4700::1111", "public"],
      ["example.com", null],
      ["1.2.3", null],
      ["::g", null],
    ];
    for (const [ip, kind] of cases) expect(addressKind(ip), ip).toBe(kind);
  });

  it("refuses non-public targets unless private targets are allowed: on in dev, off in prod", () => {
    expect(loadConfig("dev").webhooks.allowPrivateTargets).toBe(true);
    expect(loadConfig("prod").webhooks.allowPrivateTargets).toBe(false);
    expect(webhookUrlProblem("http://127.0.0.1:8080/hook", true)).toBeNull();
    expect(webhookUrlProblem("http://127.0.0.1:8080/hook", false)).toContain("a loopback address is not a public one");
    expect(webhookUrlProblem("http://[::1]/hook", false)).toContain("loopback");
    expect(webhookUrlProblem("http://localhost:3000/hook", false)).toContain("localhost is this machine");
    expect(webhookUrlProblem("http://169.254.169.254/latest/meta-data", false)).toContain("link-local");
    // A name is resolved, and checked, at every delivery.
    expect(webhookUrlProblem("https://hooks.example.com/in", false)).toBeNull();
    expect(webhookUrlProblem("ftp://example.com/x", true)).toBe("give an http:// or https:// URL");
    expect(webhookAddressProblem("internal.example", "10.0.0.7", false)).toContain("internal.example (10.0.0.7)");
    expect(webhookAddressProblem("internal.example", "10.0.0.7", true)).toBeNull();
  });
});

describe("a delivery's signature", () => {
  const secret = "whsec_test-secret";
  const body = webhookBody({ deliveryId: "whd_1", webhookId: "whk_1", event: { eventId: "evt_1" } });

  it("is t=<seconds>,v1=<hex HMAC-SHA256 of '<t>.<body>'>, as node's own HMAC computes it", () => {
    const expected = createHmac("sha256", secret).update(`1767225600.${body}`).digest("hex");
    expect(signWebhook(secret, 1_767_225_600, body)).toBe(`t=1767225600,v1=${expected}`);
  });

  it("verifies with the secret, and fails with another secret, another body or an old timestamp", () => {
    const header = signWebhook(secret, 1000, body);
    expect(verifyWebhookSignature({ secret, header, body, nowSeconds: 1010 })).toEqual({ ok: true, t: 1000 });
    expect(verifyWebhookSignature({ secret: "whsec_other", header, body, nowSeconds: 1010 }).ok).toBe(false);
    expect(verifyWebhookSignature({ secret, header, body: `${body} `, nowSeconds: 1010 }).ok).toBe(false);
    expect(verifyWebhookSignature({ secret, header, body, nowSeconds: 1000 + 301 })).toEqual({
      ok: false,
      reason: "the timestamp 1000 is outside the tolerance",
    });
    expect(verifyWebhookSignature({ secret, header: "v1=abc", body, nowSeconds: 1000 }).ok).toBe(false);
    expect(verifyWebhookSignature({ secret, header: undefined, body, nowSeconds: 1000 }).ok).toBe(false);
  });
});

describe("webhook deliveries", () => {
  it("have an ID stable in (hook, Event), and different for another hook or Event", () => {
    const a = webhookDeliveryId("whk_a", "evt_1");
    expect(a).toMatch(/^whd_[0-9a-f]{32}$/);
    expect(webhookDeliveryId("whk_a", "evt_1")).toBe(a);
    expect(webhookDeliveryId("whk_b", "evt_1")).not.toBe(a);
    expect(webhookDeliveryId("whk_a", "evt_2")).not.toBe(a);
  });

  it("take a set of catalogued Event types, each once", () => {
    expect(webhookEventTypesSchema.safeParse(["approval.requested", "canonical.advanced"]).success).toBe(true);
    expect(webhookEventTypesSchema.safeParse([]).success).toBe(false);
    expect(webhookEventTypesSchema.safeParse(["approval.requested", "approval.requested"]).success).toBe(false);
    expect(webhookEventTypesSchema.safeParse(["no.such"]).success).toBe(false);
  });

  it("never carry the dead letter of a webhook delivery (a dead receiver would feed itself forever)", () => {
    const dl = (commandType: string) => ({ eventType: "dead_letter.recorded", payload: { commandType } });
    expect(webhookMaySend(dl("webhook.deliver"))).toBe(false);
    expect(webhookMaySend(dl("candidate.land"))).toBe(true);
    expect(webhookMaySend({ eventType: "approval.requested", payload: {} })).toBe(true);
  });
});
