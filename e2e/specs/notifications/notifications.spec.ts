import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { hydrated } from "../../support/hydrated.ts";
import { saveScreenshot } from "../../support/screenshots.ts";
import { DEMO_TENANT, trpcData, trpcMutation, trpcQuery } from "../../support/trpc.ts";
import { type Receiver, startReceiver } from "./fixtures/receiver.ts";

/**
 * Notifications and webhooks through the running product (docs/notifications.md): the
 * worker's event router makes the demo admin's notification from the real approval.requested, and
 * delivers a project's Event to a real HTTP receiver on 127.0.0.1 that checks the signature with the
 * secret the page showed once.
 */
const demoProject = () => process.env.E2E_DEMO_PROJECT_ID ?? "";

interface InboxItem {
  id: string;
  kind: string;
  title: string;
  candidateId: string | null;
  readAt: string | null;
  actor: { name: string } | null;
}

const inbox = async (api: Parameters<typeof trpcQuery>[0]) =>
  trpcData<InboxItem[]>(await trpcQuery(api, "notifications.list", { tenantId: DEMO_TENANT, limit: 200 }));

test("the inbox receives an approval request, and opening it reads it", async ({ page }) => {
  // One Agent run and a verification (build, the unit suite, the authorization tests).
  test.setTimeout(300_000);
  const title = `Write down who may read another customer's orders (${randomBytes(3).toString("hex")})`;
  // A Change that touches authorization: its Candidate waits for a person's approval.
  const { changeId } = await trpcData<{ changeId: string }>(
    await trpcMutation(page.request, "change.create", {
      tenantId: DEMO_TENANT,
      projectId: demoProject(),
      clientRequestId: `e2e-inbox-${randomBytes(6).toString("hex")}`,
      change: {
        title,
        riskTier: "low",
        tasks: [
          {
            key: "note",
            title: "Authorization note",
            intents: { paths: ["src/authorization-orders-note.ts"] },
            editPlan: [
              {
                op: "write",
                path: "src/authorization-orders-note.ts",
                content: 'export const ORDERS_NOTE = "Only admins read another customer\'s orders.";\n',
              },
            ],
          },
        ],
      },
    }),
  );

  let notification: InboxItem | undefined;
  await expect
    .poll(
      async () => {
        notification = (await inbox(page.request)).find(
          (n) => n.kind === "approval_requested" && n.title.includes(title),
        );
        return notification ? "notified" : "not yet";
      },
      { timeout: 240_000, intervals: [2_000], message: `the approval request for ${changeId} reaches the inbox` },
    )
    .toBe("notified");
  expect(notification?.readAt).toBeNull();
  expect(notification?.actor?.name).toBe("Demo Admin");

  await page.goto("/");
  await expect(page.getByTestId("inbox-badge")).toBeVisible();
  await page.getByTestId("nav-inbox").click();
  await expect(page).toHaveURL(/\/inbox$/);
  const item = page.locator(`[data-testid="notification"][data-notification-id="${notification?.id}"]`);
  await expect(item).toHaveAttribute("data-read", "false");
  await expect(item).toContainText(title);
  await expect(item.getByTestId("notification-actor")).toContainText("requested by Demo Admin");
  await saveScreenshot(page, "inbox");

  await item.getByTestId("notification-link").click();
  await expect(page).toHaveURL(new RegExp(`/candidates/${notification?.candidateId}$`));
  await expect
    .poll(async () => (await inbox(page.request)).find((n) => n.id === notification?.id)?.readAt ?? null)
    .not.toBeNull();
});

test.describe("a project webhook", () => {
  let receiver: Receiver;
  test.beforeAll(async () => {
    receiver = await startReceiver();
  });
  test.afterAll(async () => {
    await receiver?.stop();
  });

  test("delivers a subscribed Event signed with the secret shown once, and Redeliver sends it again", async ({
    page,
  }) => {
    test.setTimeout(180_000);
    // A project of its own, so its policy edit touches nobody else's Changes.
    const name = `hooks-${randomBytes(3).toString("hex")}`;
    const { projectId } = await trpcData<{ projectId: string }>(
      await trpcMutation(page.request, "projects.create", { tenantId: DEMO_TENANT, name }),
    );
    await page.goto(`/projects/${projectId}`);
    // The new project's page fills in as the worker provisions it (panels appear, the page moves):
    // the link is clicked once it has, so the click lands on it.
    await expect(page.getByTestId("project-status")).toHaveText("active", { timeout: 60_000 });
    await expect(page.getByTestId("project-generation")).toHaveText("S0");
    await hydrated(page);
    await page.getByTestId("webhooks-link").click();
    await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/webhooks$`));
    await hydrated(page);

    const form = page.getByTestId("webhook-form");
    await form.getByLabel("Payload URL").fill(receiver.url);
    // Only policy.updated: untick the suggested types first.
    const ticked = form.locator("input[type=checkbox]:checked");
    while ((await ticked.count()) > 0) await ticked.first().uncheck();
    await form.locator('input[data-event-type="policy.updated"]').check();
    await page.getByTestId("create-webhook").click();
    const secret = (await page.getByTestId("new-webhook-secret").textContent()) ?? "";
    expect(secret).toMatch(/^whsec_/);
    receiver.secret = secret;
    await expect(page.getByTestId("webhook")).toHaveCount(1);
    await expect(page.getByTestId("delivery-log")).toHaveAttribute("data-state", "empty");

    // An admin edits the project's policy: policy.updated.
    const policy = await trpcData<{ version: number; document: { rerunBudget: number } }>(
      await trpcQuery(page.request, "policy.get", { tenantId: DEMO_TENANT, projectId }),
    );
    await trpcData(
      await trpcMutation(page.request, "policy.update", {
        tenantId: DEMO_TENANT,
        projectId,
        expectedVersion: policy.version,
        document: { ...policy.document, rerunBudget: (policy.document.rerunBudget % 5) + 1 },
      }),
    );

    await expect.poll(() => receiver.got.length, { timeout: 60_000 }).toBe(1);
    const [first] = receiver.got;
    expect(first?.verified).toBe(true);
    expect(first?.event).toBe("policy.updated");
    expect(first?.body.event.projectId).toBe(projectId);
    const row = (id: string) => page.locator(`[data-testid="delivery"][data-delivery-id="${id}"]`);
    await page.reload();
    await expect(row(first?.delivery ?? "")).toHaveAttribute("data-status", "succeeded");
    await expect(row(first?.delivery ?? "").getByTestId("delivery-attempt")).toContainText("HTTP 200");

    await row(first?.delivery ?? "")
      .getByTestId("redeliver")
      .click();
    await expect.poll(() => receiver.got.length, { timeout: 60_000 }).toBe(2);
    const second = receiver.got[1];
    expect(second?.verified).toBe(true);
    // A new delivery of the same Event: an ID of its own, the same Event inside.
    expect(second?.delivery).not.toBe(first?.delivery);
    expect(second?.body.event.eventId).toBe(first?.body.event.eventId);
    await expect(page.getByTestId("delivery")).toHaveCount(2, { timeout: 15_000 });
    await expect(row(second?.delivery ?? "")).toContainText(`redelivery of ${first?.delivery} by Demo Admin`);
    await expect(row(second?.delivery ?? "")).toHaveAttribute("data-status", "succeeded", { timeout: 15_000 });
    await saveScreenshot(page, "webhooks");
  });
});
