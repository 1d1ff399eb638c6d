import { randomBytes, randomUUID } from "node:crypto";
import { DomainError, type EventType, type RhumbatronConfig, webhookUrlProblem } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { withTransaction } from "../transaction.ts";

/**
 * A project's outgoing webhooks (docs/notifications.md). An admin subscribes a URL to
 * Event types and gets the signing secret once: `whsec_<43 base64url characters>` (32 random bytes).
 * The secret is stored as it was made, because every delivery is signed with it (HMAC needs the
 * secret itself, not a hash of it); no read here selects it, so it never leaves the database again.
 */
export const WEBHOOK_SECRET_PREFIX = "whsec_";
const SHOWN_PREFIX_LENGTH = 12;

export interface WebhookSummary {
  id: string;
  projectId: string;
  url: string;
  eventTypes: EventType[];
  /** The secret's first characters (`whsec_…`), to tell secrets apart; never the secret. */
  secretPrefix: string;
  createdBy: { id: string; name: string | null };
  createdAt: Date;
  /** A paused hook gets no new deliveries (updateWebhook). */
  paused: boolean;
  /** The newest delivery's status and time; null before the first. */
  lastDelivery: { id: string; status: string; createdAt: Date } | null;
}

/** Every column a summary shows: the secret is not one of them. */
const summarySelect = {
  id: true,
  projectId: true,
  url: true,
  eventTypes: true,
  secretPrefix: true,
  createdBy: true,
  createdAt: true,
  paused: true,
  deliveries: {
    orderBy: [{ createdAt: "desc" }, { id: "asc" }],
    take: 1,
    select: { id: true, status: true, createdAt: true },
  },
} satisfies Prisma.WebhookSelect;

interface SummaryRow {
  id: string;
  projectId: string;
  url: string;
  eventTypes: string[];
  secretPrefix: string;
  createdBy: string;
  createdAt: Date;
  paused: boolean;
  deliveries: { id: string; status: string; createdAt: Date }[];
}

async function summaries(db: Db, rows: SummaryRow[]): Promise<WebhookSummary[]> {
  const people = await db.user.findMany({
    where: { id: { in: [...new Set(rows.map((r) => r.createdBy))] } },
    select: { id: true, name: true },
  });
  const names = new Map(people.map((p) => [p.id, p.name]));
  return rows.map(({ deliveries, createdBy, eventTypes, ...r }) => ({
    ...r,
    eventTypes: eventTypes as EventType[],
    createdBy: { id: createdBy, name: names.get(createdBy) ?? null },
    lastDelivery: deliveries[0] ?? null,
  }));
}

/** The project, when it is this tenant's; NOT_FOUND otherwise (another tenant's project is not there). */
async function projectOf(db: Pick<Db, "project">, tenantId: string, projectId: string) {
  const p = await db.project.findFirst({ where: { id: projectId, tenantId }, select: { id: true, status: true } });
  if (!p) throw new DomainError("NOT_FOUND", `project ${projectId} not found`);
  return p;
}

/**
 * Refuses a URL a hook may not point at (config.webhooks.allowPrivateTargets: a literal private
 * address or localhost is refused in prod; a name is checked again at each delivery). Create and
 * update both check here.
 */
function checkWebhookUrl(url: string, config: RhumbatronConfig): void {
  const problem = webhookUrlProblem(url, config.webhooks.allowPrivateTargets);
  if (problem) throw new DomainError("INVALID_INPUT", `url: ${problem}`);
}

/**
 * Subscribes `url` to `eventTypes` in the project and returns the secret: the only time it is
 * returned. The URL is checked as checkWebhookUrl says.
 */
export async function createWebhook(
  db: Db,
  h: { tenantId: string; projectId: string; url: string; eventTypes: EventType[]; actorId: string },
  deps: { config: RhumbatronConfig; now: () => Date },
): Promise<{ webhook: WebhookSummary; secret: string }> {
  checkWebhookUrl(h.url, deps.config);
  const secret = `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString("base64url")}`;
  const row = await withTransaction(db, async ({ tx }) => {
    // The project row's lock makes the count and the insert one step: two admins cannot pass the cap together.
    const locked = await tx.$queryRaw<{ id: string; status: string }[]>`
      SELECT id, status::text FROM projects WHERE id = ${h.projectId} AND tenant_id = ${h.tenantId} FOR UPDATE`;
    const project = locked[0];
    if (!project) throw new DomainError("NOT_FOUND", `project ${h.projectId} not found`);
    if (project.status === "archived") {
      throw new DomainError("PRECONDITION_FAILED", `project ${h.projectId} is archived: its Events have ended`);
    }
    const max = deps.config.webhooks.maxPerProject;
    if ((await tx.webhook.count({ where: { projectId: h.projectId } })) >= max) {
      throw new DomainError("PRECONDITION_FAILED", `a project has at most ${max} webhooks; remove one first`);
    }
    return tx.webhook.create({
      data: {
        id: `whk_${randomUUID().replace(/-/g, "")}`,
        projectId: h.projectId,
        url: h.url,
        eventTypes: [...h.eventTypes],
        secret,
        secretPrefix: secret.slice(0, SHOWN_PREFIX_LENGTH),
        createdBy: h.actorId,
        createdAt: deps.now(),
      },
      select: summarySelect,
    });
  });
  const [webhook] = await summaries(db, [row]);
  if (!webhook) throw new Error("the new webhook was not read back");
  return { webhook, secret };
}

/** The project's webhooks, oldest first, each with its newest delivery (never a secret). */
export async function listWebhooks(db: Db, q: { tenantId: string; projectId: string }): Promise<WebhookSummary[]> {
  await projectOf(db, q.tenantId, q.projectId);
  const rows = await db.webhook.findMany({
    where: { projectId: q.projectId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: summarySelect,
  });
  return summaries(db, rows);
}

export interface WebhookChanges {
  url?: string;
  eventTypes?: EventType[];
  /** true pauses the hook, false resumes it; the same value again changes nothing. */
  paused?: boolean;
}

/**
 * Changes a hook of this tenant: its URL (checked as create checks it), its Event types, whether it
 * is paused. A paused hook gets no new deliveries; deliveries already queued still run (to the URL
 * the hook has when each is sent). Resuming records when, and the fan-out sends the hook no Event
 * from before then: an Event that happened while it was paused is never sent to it. A hook that is
 * not this tenant's is NOT_FOUND, and nothing changes.
 */
export async function updateWebhook(
  db: Db,
  h: { tenantId: string; webhookId: string } & WebhookChanges,
  deps: { config: RhumbatronConfig; now: () => Date },
): Promise<WebhookSummary> {
  if (h.url !== undefined) checkWebhookUrl(h.url, deps.config);
  const row = await withTransaction(db, async ({ tx }) => {
    // The hook's row lock orders two updates: a resume is recorded once, by the one that unpaused it.
    const locked = await tx.$queryRaw<{ paused: boolean }[]>`
      SELECT w.paused FROM webhooks w JOIN projects p ON p.id = w.project_id
      WHERE w.id = ${h.webhookId} AND p.tenant_id = ${h.tenantId} FOR UPDATE OF w`;
    const hook = locked[0];
    if (!hook) throw new DomainError("NOT_FOUND", `webhook ${h.webhookId} not found`);
    const resumes = h.paused === false && hook.paused;
    return tx.webhook.update({
      where: { id: h.webhookId },
      data: {
        ...(h.url !== undefined && { url: h.url }),
        ...(h.eventTypes !== undefined && { eventTypes: [...h.eventTypes] }),
        ...(h.paused !== undefined && { paused: h.paused }),
        ...(resumes && { resumedAt: deps.now() }),
      },
      select: summarySelect,
    });
  });
  const [webhook] = await summaries(db, [row]);
  if (!webhook) throw new Error("the webhook was not read back");
  return webhook;
}

/**
 * Removes a webhook of this tenant with its delivery log. A delivery still on the queue finds no hook
 * and sends nothing. A hook that is not this tenant's is NOT_FOUND.
 */
export async function removeWebhook(db: Db, q: { tenantId: string; webhookId: string }): Promise<{ removed: string }> {
  const removed = await db.webhook.deleteMany({ where: { id: q.webhookId, project: { tenantId: q.tenantId } } });
  if (removed.count === 0) throw new DomainError("NOT_FOUND", `webhook ${q.webhookId} not found`);
  return { removed: q.webhookId };
}

/** A hook of this tenant's, with its project (NOT_FOUND otherwise); never its secret. */
export async function webhookOf(db: Pick<Db, "webhook">, tenantId: string, webhookId: string) {
  const hook = await db.webhook.findFirst({
    where: { id: webhookId, project: { tenantId } },
    select: { id: true, projectId: true, url: true },
  });
  if (!hook) throw new DomainError("NOT_FOUND", `webhook ${webhookId} not found`);
  return hook;
}
