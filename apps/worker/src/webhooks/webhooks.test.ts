import { createHmac, timingSafeEqual } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type EventEnvelope,
  loadConfig,
  type RhumbatronConfig,
  retryDelaySeconds,
  streamIndex,
  webhookDeliveryId,
} from "@rhumbatron/core";
import {
  createWebhook,
  listWebhookDeliveries,
  localFolderBlobStore,
  recordEvidence,
  redeliverWebhookDelivery,
  removeWebhook,
  updateWebhook,
  type WebhookChanges,
} from "@rhumbatron/db";
import { testEvent, useTestDatabase } from "@rhumbatron/db/testing";
import { appendToOutbox, consumeQueue, type Nudger, withTransaction } from "@rhumbatron/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildFunctions } from "../functions/index.ts";
import type { FunctionContext, RunTrigger } from "../functions/types.ts";
import { captureLogs, manualClock, testConfig, testIdentity } from "../testing.ts";
import { webhookDeliverHandler } from "./deliver.ts";
import { guardedLookup } from "./post.ts";

/**
 * Outgoing webhooks end to end in the worker: Events through the outbox, the stream, the event
 * router's fan-out and the webhooks queue, to a real HTTP receiver on 127.0.0.1 that checks each
 * delivery's signature itself (node's own HMAC, not the code that signed it). The clock is moved
 * by hand: a retry is due when the queue's backoff says so, never after a sleep.
 */
const t = useTestDatabase();
const TENANT = "ten_w";
const ADMIN = "usr_w_admin";
const OPERATOR = "usr_w_operator";
const noNudge: Nudger = { nudge: async () => {} };
const clock = manualClock("2026-06-01T10:00:00Z");

interface Received {
  /** The request's path: which URL of the receiver the hook pointed at. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The receiver's own check of X-Rhumbatron-Signature with the secret it was given. */
  verified: boolean;
}

/**
 * A webhook receiver as a user would write one: it verifies the signature with its secret (HMAC of
 * "<t>.<raw body>", t within 5 minutes of its clock), answers 401 when that fails, and otherwise
 * what `answers` says next (200 once they run out). `hang` never answers.
 */
class Receiver {
  readonly got: Received[] = [];
  answers: number[] = [];
  secret = "";
  hang = false;
  private server: Server | undefined;
  url = "";

  async start() {
    this.server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => {
        body += c;
      });
      req.on("end", () => {
        const verified = verify(this.secret, req.headers["x-rhumbatron-signature"], body);
        this.got.push({ path: req.url ?? "", headers: req.headers, body, verified });
        if (this.hang) return;
        const status = verified ? (this.answers.shift() ?? 200) : 401;
        res.writeHead(status, { "content-type": "text/plain" }).end(verified ? `status ${status}` : "bad signature");
      });
    });
    await new Promise<void>((r) => this.server?.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  stop() {
    this.server?.closeAllConnections();
    return new Promise<void>((r) => this.server?.close(() => r()));
  }
}

function verify(secret: string, header: string | string[] | undefined, body: string): boolean {
  if (typeof header !== "string") return false;
  const fields = Object.fromEntries(header.split(",").map((p) => p.split("=", 2) as [string, string]));
  const ts = Number(fields.t);
  if (!Number.isInteger(ts) || Math.abs(clock.now().getTime() / 1000 - ts) > 300 || !fields.v1) return false;
  const expected = createHmac("sha256", secret).update(`${ts}.${body}`).digest();
  const given = Buffer.from(fields.v1, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const receiver = new Receiver();
beforeAll(async () => {
  await receiver.start();
  await t.db.tenant.create({ data: { id: TENANT, slug: "w", name: "W" } });
  for (const [id, role] of [
    [ADMIN, "admin"],
    [OPERATOR, "operator"],
  ] as const) {
    await t.db.user.create({ data: { id, email: `${role}@w.test`, name: `W ${role}` } });
    await t.db.membership.create({ data: { tenantId: TENANT, userId: id, role } });
  }
});
afterAll(() => receiver.stop());

/** A project of its own per test, and a fresh receiver script. */
async function project(name: string, secretFor: (secret: string) => string = (s) => s) {
  const id = `proj_w_${name}`;
  await t.db.project.create({ data: { id, tenantId: TENANT, name, status: "active" } });
  await t.db.change.create({
    data: { id: `chg_${id}`, projectId: id, title: name, riskTier: "high", clientRequestId: id },
  });
  // Each test starts with an empty webhooks queue: an earlier test's retrying delivery is not its business.
  await t.db.queueMessage.deleteMany({ where: { queue: "webhooks" } });
  receiver.got.length = 0;
  receiver.answers = [];
  receiver.hang = false;
  return {
    id,
    async hook(eventTypes: EventEnvelope["eventType"][], url = receiver.url) {
      const made = await createWebhook(
        t.db,
        { tenantId: TENANT, projectId: id, url, eventTypes, actorId: ADMIN },
        { config: testConfig, now: () => new Date("2026-05-01T00:00:00Z") },
      );
      receiver.secret = secretFor(made.secret);
      return made;
    },
  };
}

function worker(config: RhumbatronConfig = testConfig) {
  const functions = buildFunctions({
    config,
    nudger: noNudge,
    blobs: localFolderBlobStore(mkdtempSync(join(tmpdir(), "rh-webhooks-"))),
  });
  const logs = captureLogs();
  const run = (id: string, trigger: RunTrigger, key: string) => {
    const fn = functions.find((f) => f.id === id);
    if (!fn) throw new Error(id);
    return fn.handler({
      db: t.db,
      config,
      logger: logs.logger,
      now: clock.now,
      key,
      trigger,
      worker: testIdentity(),
    } satisfies FunctionContext);
  };
  return {
    /** Writes the Events, publishes them and runs the event router over their stream. */
    async route(projectId: string, events: EventEnvelope[]) {
      await withTransaction(t.db, (ctx) => appendToOutbox(ctx, events, { config, nudger: noNudge }));
      await run("outbox-publisher", "nudge", "default");
      return run("event-router", "nudge", String(streamIndex(projectId, config.streams.count)));
    },
    deliver: () => run("queue-webhooks", "nudge", "default") as Promise<{ leased: number }>,
    run,
  };
}

const requested = (projectId: string, key = "a") =>
  testEvent("approval.requested", {
    projectId,
    tenantId: TENANT,
    key,
    at: clock.now(),
    payload: { candidateId: `cand_${key}`, treeHash: "t".repeat(40) },
  });

const header = (r: Received | undefined, name: string) => r?.headers[name.toLowerCase()];

describe("outgoing webhooks", () => {
  it("delivers a subscribed Event once, signed so the receiver's own check verifies; an unsubscribed one is not sent", async () => {
    const p = await project("once");
    const { webhook, secret } = await p.hook(["approval.requested"]);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const w = worker();
    const event = requested(p.id);
    const other = testEvent("task.ready", {
      projectId: p.id,
      tenantId: TENANT,
      taskId: "t1",
      at: clock.now(),
      payload: { key: "t1" },
    });
    await w.route(p.id, [event, other]);
    expect(await w.deliver()).toMatchObject({ leased: 1 });

    expect(receiver.got).toHaveLength(1);
    const [got] = receiver.got;
    expect(got?.verified).toBe(true);
    expect(header(got, "X-Rhumbatron-Event")).toBe("approval.requested");
    expect(header(got, "X-Rhumbatron-Delivery")).toBe(webhookDeliveryId(webhook.id, event.eventId));
    expect(header(got, "X-Rhumbatron-Signature")).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(JSON.parse(got?.body ?? "{}")).toEqual({
      deliveryId: webhookDeliveryId(webhook.id, event.eventId),
      webhookId: webhook.id,
      event: JSON.parse(JSON.stringify(event)),
    });

    // Routed again (the stream delivered it twice) and the queue run again: nothing more is sent.
    await t.db.streamCursor.updateMany({ where: { subscription: "webhook-fanout" }, data: { committedOffset: 0 } });
    await w.route(p.id, []);
    expect(await w.deliver()).toMatchObject({ leased: 0 });
    expect(receiver.got).toHaveLength(1);
    const log = await listWebhookDeliveries(t.db, { tenantId: TENANT, webhookId: webhook.id });
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ eventType: "approval.requested", status: "succeeded", redeliveryOf: null });
    expect(log[0]?.attempts).toMatchObject([{ attempt: 1, outcome: "succeeded", httpStatus: 200, error: null }]);
    expect(await t.db.webhookDelivery.count({ where: { eventType: "task.ready" } })).toBe(0);
  });

  it("sends test.status_changed when a check's record makes a test flaky (docs/flaky-tests.md)", async () => {
    const p = await project("flaky");
    await p.hook(["test.status_changed"]);
    const candidateId = `cand_${p.id}`;
    await t.db.candidate.create({
      data: {
        id: candidateId,
        projectId: p.id,
        changeId: `chg_${p.id}`,
        compositionKey: candidateId,
        baseGeneration: 0,
        baseCommit: "c0",
        status: "verifying",
        composedTree: "t1",
      },
    });
    // The test failed once and passed on its second attempt on this tree: flaky, where it was ok.
    const tests = [{ id: "test/add.test.js::adds", name: "adds", status: "passed", attempts: 2, failedAttempts: 1 }];
    await withTransaction(t.db, (ctx) =>
      recordEvidence(
        ctx,
        { candidateId, changeId: `chg_${p.id}` },
        {
          id: `ev_${p.id}`,
          checkId: "unit",
          kind: "command",
          status: "pass",
          coverage: "checked_supported",
          durationMs: 5,
          timeoutSeconds: 60,
          metrics: {},
          outputKey: null,
          detail: "2 attempts; flaky: adds",
          excerpt: null,
          tests,
          completedAt: clock.now(),
        },
        { config: testConfig, nudger: noNudge, now: clock.now },
      ),
    );
    const w = worker();
    await w.route(p.id, []);
    expect(await w.deliver()).toMatchObject({ leased: 1 });
    expect(receiver.got).toHaveLength(1);
    expect(receiver.got[0]?.verified).toBe(true);
    expect(header(receiver.got[0], "X-Rhumbatron-Event")).toBe("test.status_changed");
    expect(JSON.parse(receiver.got[0]?.body ?? "{}").event).toMatchObject({
      eventType: "test.status_changed",
      payload: { checkId: "unit", testId: "test/add.test.js::adds", status: "flaky", previous: "ok", candidateId },
    });
  });

  it("retries a receiver that answered 500 after the queue's backoff, under the same delivery ID, and logs both attempts", async () => {
    const p = await project("retry");
    const { webhook } = await p.hook(["approval.requested"]);
    receiver.answers = [500, 200];
    const w = worker();
    await w.route(p.id, [requested(p.id)]);
    await w.deliver();
    const first = await listWebhookDeliveries(t.db, { tenantId: TENANT, webhookId: webhook.id });
    const delay = retryDelaySeconds(testConfig.queues.policies.webhooks, 1);
    expect(first[0]).toMatchObject({
      status: "retrying",
      nextAttemptAt: new Date(clock.now().getTime() + delay * 1000),
    });
    expect(first[0]?.attempts).toMatchObject([
      { attempt: 1, outcome: "failed", httpStatus: 500, error: "answered 500: status 500" },
    ]);
    // Not due yet: the queue holds it back.
    expect(await w.deliver()).toMatchObject({ leased: 0 });
    expect(receiver.got).toHaveLength(1);

    clock.set(new Date(clock.now().getTime() + delay * 1000).toISOString());
    expect(await w.deliver()).toMatchObject({ leased: 1 });
    expect(receiver.got).toHaveLength(2);
    expect(receiver.got.every((r) => r.verified)).toBe(true);
    const ids = receiver.got.map((r) => header(r, "X-Rhumbatron-Delivery"));
    expect(ids[0]).toBe(ids[1]);
    expect(receiver.got[0]?.body).toBe(receiver.got[1]?.body);
    const log = await listWebhookDeliveries(t.db, { tenantId: TENANT, webhookId: webhook.id });
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ status: "succeeded", nextAttemptAt: null });
    expect(log[0]?.attempts.map((a) => [a.attempt, a.outcome, a.httpStatus])).toEqual([
      [1, "failed", 500],
      [2, "succeeded", 200],
    ]);
  });

  it("redelivers an Event as a new delivery with an ID of its own; the body names the same Event", async () => {
    const p = await project("redeliver");
    const { webhook } = await p.hook(["approval.requested"]);
    const w = worker();
    const event = requested(p.id);
    await w.route(p.id, [event]);
    await w.deliver();
    const [original] = await listWebhookDeliveries(t.db, { tenantId: TENANT, webhookId: webhook.id });
    if (!original) throw new Error("no delivery");

    const again = await redeliverWebhookDelivery(
      t.db,
      { tenantId: TENANT, deliveryId: original.id, actorId: ADMIN },
      { config: testConfig, nudger: noNudge, now: clock.now },
    );
    expect(again.deliveryId).not.toBe(original.id);
    expect(again.redeliveryOf).toBe(original.id);
    await w.deliver();
    expect(receiver.got).toHaveLength(2);
    const second = receiver.got[1];
    expect(second?.verified).toBe(true);
    expect(header(second, "X-Rhumbatron-Delivery")).toBe(again.deliveryId);
    expect(JSON.parse(second?.body ?? "{}").event.eventId).toBe(event.eventId);
    const log = await listWebhookDeliveries(t.db, { tenantId: TENANT, webhookId: webhook.id });
    expect(log.map((d) => [d.id, d.status, d.redeliveryOf, d.requestedBy?.name ?? null])).toEqual(
      expect.arrayContaining([
        [original.id, "succeeded", null, null],
        [again.deliveryId, "succeeded", original.id, "W admin"],
      ]),
    );
    // Another tenant's delivery cannot be redelivered from here.
    await expect(
      redeliverWebhookDelivery(
        t.db,
        { tenantId: "ten_nobody", deliveryId: original.id, actorId: ADMIN },
        { config: testConfig, nudger: noNudge, now: clock.now },
      ),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("fails the receiver's check when it verifies with another secret, and logs the receiver's refusal", async () => {
    const p = await project("badsecret", () => "whsec_not-the-hook-secret");
    const { webhook, secret } = await p.hook(["approval.requested"]);
    const w = worker();
    await w.route(p.id, [requested(p.id)]);
    await w.deliver();
    const [got] = receiver.got;
    expect(got?.verified).toBe(false);
    // The same request checks out with the hook's own secret: only the secret was wrong.
    expect(verify(secret, header(got, "X-Rhumbatron-Signature"), got?.body ?? "")).toBe(true);
    // And a body changed on the way does not.
    expect(verify(secret, header(got, "X-Rhumbatron-Signature"), `${got?.body} `)).toBe(false);
    const [d] = await listWebhookDeliveries(t.db, { tenantId: TENANT, webhookId: webhook.id });
    expect(d?.status).toBe("retrying");
    expect(d?.attempts).toMatchObject([{ outcome: "failed", httpStatus: 401, error: "answered 401: bad signature" }]);
  });

  it("dead-letters a delivery whose retries ran out, tells the operators, and sends the hook no dead letter of its own", async () => {
    const p = await project("dead");
    const { webhook } = await p.hook(["approval.requested", "dead_letter.recorded"]);
    receiver.answers = Array(10).fill(503);
    const w = worker();
    await w.route(p.id, [requested(p.id)]);
    const policy = testConfig.queues.policies.webhooks;
    for (let n = 1; n <= policy.maxRetries + 1; n++) {
      expect(await w.deliver(), `delivery ${n}`).toMatchObject({ leased: 1 });
      clock.set(new Date(clock.now().getTime() + retryDelaySeconds(policy, n) * 1000).toISOString());
    }
    expect(receiver.got).toHaveLength(policy.maxRetries + 1);
    const [d] = await listWebhookDeliveries(t.db, { tenantId: TENANT, webhookId: webhook.id });
    expect(d?.status).toBe("failed");
    expect(d?.attempts).toHaveLength(policy.maxRetries + 1);
    expect(await t.db.queueMessage.count({ where: { queue: "webhooks" } })).toBe(0);

    await w.run("queue-dead-letter", "nudge", "default");
    const dl = await t.db.deadLetter.findUniqueOrThrow({
      where: { commandId: `cmd_webhook_${webhookDeliveryId(webhook.id, requested(p.id).eventId)}` },
    });
    expect(dl).toMatchObject({ status: "open", originQueue: "webhooks", projectId: p.id });
    expect(dl.reason).toContain("answered 503");
    await w.route(p.id, []);
    expect(await t.db.notification.findMany({ where: { deadLetterId: dl.id }, select: { userId: true } })).toEqual(
      expect.arrayContaining([{ userId: ADMIN }, { userId: OPERATOR }]),
    );
    // The hook is subscribed to dead letters, but not to its own: no delivery, nothing more sent.
    expect(
      await t.db.webhookDelivery.count({ where: { webhookId: webhook.id, eventType: "dead_letter.recorded" } }),
    ).toBe(0);
    await w.deliver();
    expect(receiver.got).toHaveLength(policy.maxRetries + 1);
  });

  it("refuses a private address when private targets are not allowed, and sends nothing", async () => {
    const strict = loadConfig("dev", { webhooks: { allowPrivateTargets: false } });
    const p = await project("private");
    await expect(
      createWebhook(
        t.db,
        { tenantId: TENANT, projectId: p.id, url: receiver.url, eventTypes: ["approval.requested"], actorId: ADMIN },
        { config: strict, now: clock.now },
      ),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
    // A hook made while they were allowed, delivered by a worker that does not allow them.
    const { webhook } = await p.hook(["approval.requested"]);
    const localhostHook = await p.hook(["approval.requested"], receiver.url.replace("127.0.0.1", "localhost"));
    await worker().route(p.id, [requested(p.id)]);
    const deps = { config: strict, nudger: noNudge, now: clock.now, owner: "strict" };
    await consumeQueue(t.db, "webhooks", [webhookDeliverHandler(deps)], deps);
    expect(receiver.got).toEqual([]);
    for (const id of [webhook.id, localhostHook.webhook.id]) {
      const [d] = await listWebhookDeliveries(t.db, { tenantId: TENANT, webhookId: id });
      expect(d?.attempts[0]?.error).toMatch(
        /^refused to connect to (127\.0\.0\.1|localhost \(127\.0\.0\.1\)): a loopback address is not a public one/,
      );
    }
    // A name is checked on what it resolves to, when the connection looks it up.
    const looked = (address: string) =>
      new Promise<string | null>((resolve) =>
        guardedLookup(false, (_h, cb) => cb(null, [{ address, family: 4 }]))("hooks.example", {}, (err) =>
          resolve(err ? err.message : null),
        ),
      );
    expect(await looked("10.0.0.5")).toContain("refused to connect to hooks.example (10.0.0.5): a private address");
    expect(await looked("93.184.215.14")).toBeNull();
  });

  it("gives up on a receiver that does not answer within the timeout, and sends nothing to a removed hook", async () => {
    const quick = loadConfig("dev", { webhooks: { timeoutSeconds: 1 } });
    const p = await project("slow");
    const { webhook } = await p.hook(["approval.requested"]);
    receiver.hang = true;
    const w = worker(quick);
    await w.route(p.id, [requested(p.id, "slow")]);
    await w.deliver();
    const [d] = await listWebhookDeliveries(t.db, { tenantId: TENANT, webhookId: webhook.id });
    expect(d?.attempts).toMatchObject([{ outcome: "failed", httpStatus: null, error: "did not answer within 1 s" }]);

    receiver.hang = false;
    await removeWebhook(t.db, { tenantId: TENANT, webhookId: webhook.id });
    clock.set(new Date(clock.now().getTime() + 3600_000).toISOString());
    const before = receiver.got.length;
    expect(await w.deliver()).toMatchObject({ leased: 1 });
    expect(receiver.got).toHaveLength(before);
    expect(await t.db.queueMessage.count({ where: { queue: "webhooks" } })).toBe(0);
  });
});

describe("editing and pausing a hook", () => {
  const update = (webhookId: string, changes: WebhookChanges) =>
    updateWebhook(t.db, { tenantId: TENANT, webhookId, ...changes }, { config: testConfig, now: clock.now });
  /** Moves the clock on a second: what happens next happens after what came before. */
  const tick = () => clock.set(new Date(clock.now().getTime() + 1000).toISOString());
  const readied = (projectId: string, key: string) =>
    testEvent("task.ready", { projectId, tenantId: TENANT, taskId: key, at: clock.now(), payload: { key } });

  it("sends the next Event by the new URL and Event types", async () => {
    const p = await project("edit");
    const { webhook } = await p.hook(["approval.requested"]);
    const w = worker();
    await w.route(p.id, [requested(p.id, "before")]);
    await w.deliver();
    expect(receiver.got.map((r) => [r.path, header(r, "X-Rhumbatron-Event")])).toEqual([
      ["/hook", "approval.requested"],
    ]);

    const moved = receiver.url.replace(/\/hook$/, "/moved");
    const updated = await update(webhook.id, { url: moved, eventTypes: ["task.ready"] });
    expect(updated).toMatchObject({ url: moved, eventTypes: ["task.ready"], paused: false });
    tick();
    const ready = readied(p.id, "after");
    await w.route(p.id, [requested(p.id, "after"), ready]);
    expect(await w.deliver()).toMatchObject({ leased: 1 });
    expect(receiver.got).toHaveLength(2);
    const got = receiver.got[1];
    expect(got?.path).toBe("/moved");
    expect(got?.verified).toBe(true);
    expect(header(got, "X-Rhumbatron-Event")).toBe("task.ready");
    expect(header(got, "X-Rhumbatron-Delivery")).toBe(webhookDeliveryId(webhook.id, ready.eventId));
    // The Event type it no longer hears made no delivery.
    expect(
      await t.db.webhookDelivery.count({ where: { webhookId: webhook.id, eventType: "approval.requested" } }),
    ).toBe(1);
  });

  it("gets no delivery for an Event that happened while it was paused (even one the fan-out reaches after Resume), and gets the next one", async () => {
    const p = await project("pause");
    const { webhook } = await p.hook(["approval.requested"]);
    const w = worker();
    // Queued before the pause: it still runs.
    const queued = requested(p.id, "queued");
    await w.route(p.id, [queued]);
    expect(await update(webhook.id, { paused: true })).toMatchObject({ paused: true });
    tick();
    expect(await w.deliver()).toMatchObject({ leased: 1 });
    expect(receiver.got.map((r) => header(r, "X-Rhumbatron-Delivery"))).toEqual([
      webhookDeliveryId(webhook.id, queued.eventId),
    ]);

    // Published and fanned out while paused: no delivery.
    await w.route(p.id, [requested(p.id, "paused")]);
    // Published while paused, reached by the fan-out only after Resume: no delivery either.
    const late = requested(p.id, "late");
    await withTransaction(t.db, (ctx) => appendToOutbox(ctx, [late], { config: testConfig, nudger: noNudge }));
    await w.run("outbox-publisher", "nudge", "default");
    tick();
    expect(await update(webhook.id, { paused: false })).toMatchObject({ paused: false });
    tick();
    const next = requested(p.id, "next");
    await w.route(p.id, [next]);
    expect(await w.deliver()).toMatchObject({ leased: 1 });
    expect(receiver.got.map((r) => header(r, "X-Rhumbatron-Delivery"))).toEqual([
      webhookDeliveryId(webhook.id, queued.eventId),
      webhookDeliveryId(webhook.id, next.eventId),
    ]);
    expect(receiver.got.every((r) => r.verified)).toBe(true);
    const log = await listWebhookDeliveries(t.db, { tenantId: TENANT, webhookId: webhook.id });
    expect(log.map((d) => [d.eventId, d.status])).toEqual(
      expect.arrayContaining([
        [queued.eventId, "succeeded"],
        [next.eventId, "succeeded"],
      ]),
    );
    expect(log).toHaveLength(2);
  });
});
