import { type APIRequestContext, expect, type Page, test } from "@playwright/test";
import { saveScreenshot } from "../../support/screenshots.ts";
import { deadLetterOf, POISON_TYPE, queuedCopies, sendPoisonCommand } from "./fixtures/poison.ts";

const projectId = () => process.env.E2E_DEMO_PROJECT_ID ?? "";
const row = (page: Page, commandId: string) =>
  page.locator(`[data-testid="dead-letter-row"][data-dead-letter-id="dl_${commandId}"]`);

/**
 * Waits until the dead-letter consumer has recorded the command (the worker runs it on a nudge), as
 * the operations API shows it to `api`'s user.
 */
async function recorded(api: APIRequestContext, commandId: string, attempts: number) {
  await expect
    .poll(
      async () => {
        const dl = await deadLetterOf(api, commandId);
        return dl && { status: dl.status, attempts: dl.attempts };
      },
      { timeout: 30_000 },
    )
    .toEqual({ status: "open", attempts });
}

test("a poison command is dead-lettered, shown on /operations, and Retry sends it back exactly once", async ({
  page,
}) => {
  const commandId = await sendPoisonCommand(projectId());
  await recorded(page.request, commandId, 1);
  const first = await deadLetterOf(page.request, commandId);
  expect(first).toMatchObject({
    originQueue: "integration",
    reason: `unknown command type ${POISON_TYPE} on integration`,
    payload: { attempt: 0, commandType: POISON_TYPE },
  });
  expect(await queuedCopies(commandId)).toEqual([]);

  await page.goto("/operations");
  // The worker reports its Sandbox: bubblewrap here (the setup step provides it), so no warning.
  await expect(page.getByTestId("operations-sandbox").locator("[data-isolates]")).toHaveAttribute(
    "data-isolates",
    "true",
  );
  await expect(page.getByTestId("sandbox-notice")).toHaveCount(0);
  const open = row(page, commandId);
  await expect(open).toHaveAttribute("data-status", "open");
  await expect(open).toContainText(`unknown command type ${POISON_TYPE}`);
  await expect(open).toContainText("queue integration");
  await expect(open).toContainText("1 attempts");
  await expect(open).toContainText(commandId);
  await saveScreenshot(page, "operations");

  const retried = page.waitForResponse((r) => r.url().includes("operations.retryDeadLetter"));
  await open.getByTestId("retry-button").click();
  const answer = await retried;
  expect(answer.status()).toBe(200);
  // The one send: back to the queue it came from.
  expect(await answer.text()).toContain(`"queue":"integration","commandId":"${commandId}"`);
  // Nobody handles it on integration either, so it comes back to the same dead letter, which opens
  // again with a second attempt (packages/db queues/dead-letters.ts).
  await recorded(page.request, commandId, 2);
  expect((await deadLetterOf(page.request, commandId))?.resolvedBy).toBeNull();
  await expect(open).toContainText("2 attempts", { timeout: 15_000 });
  await expect(open).toHaveAttribute("data-status", "open");
  await expect(open.getByTestId("retry-button")).toBeEnabled();
  await expect(page.getByTestId("dead-letter-error")).toHaveCount(0);

  // Exactly one re-send: the dead-letter consumer itself never sends the command again. Checked once
  // a later command has been through the same consumers: a second poison command, sent now, goes
  // the same way (integration, then the dead-letter queue), and each queue hands out its oldest
  // message first. So when it is recorded, anything the consumer sent while recording the second
  // attempt was queued before it and has been handled too, or is still on a queue: it shows below as
  // a copy on a queue or a third attempt. (One copy reaching the still-open dead letter is absorbed
  // by the consumer's duplicate rule and leaves nothing an operator can see; a loop cannot hide.)
  const later = await sendPoisonCommand(projectId());
  await recorded(page.request, later, 1);
  expect(await queuedCopies(later)).toEqual([]);
  expect(await queuedCopies(commandId)).toEqual([]);
  expect(await deadLetterOf(page.request, commandId)).toMatchObject({ status: "open", attempts: 2 });
});

test("a dead letter is dismissed with a reason, which is recorded and shown, and nothing is sent", async ({ page }) => {
  const commandId = await sendPoisonCommand(projectId());
  await recorded(page.request, commandId, 1);
  await page.goto("/operations");
  // The worker reports its Sandbox: bubblewrap here (the setup step provides it), so no warning.
  await expect(page.getByTestId("operations-sandbox").locator("[data-isolates]")).toHaveAttribute(
    "data-isolates",
    "true",
  );
  await expect(page.getByTestId("sandbox-notice")).toHaveCount(0);
  const open = row(page, commandId);
  await expect(open).toBeVisible();

  const reason = "e2e: a poison command the test sent on purpose; nothing to redo";
  await expect(open.getByTestId("dismiss-button")).toBeDisabled(); // a reason first
  await open.getByTestId("dismiss-reason").fill(reason);
  await open.getByTestId("dismiss-button").click();
  await expect(open).toHaveCount(0);

  await page.getByTestId("dead-letter-status-dismissed").click();
  const dismissed = row(page, commandId);
  await expect(dismissed).toHaveAttribute("data-status", "dismissed");
  // The operator by name, not by user ID.
  await expect(dismissed).toContainText("dismissed by Demo Admin");
  await expect(dismissed).toContainText(reason);
  await expect(dismissed.getByTestId("retry-button")).toHaveCount(0);

  expect(await deadLetterOf(page.request, commandId)).toMatchObject({
    status: "dismissed",
    attempts: 1,
    resolvedBy: "usr_demo_admin",
    resolveNote: reason,
  });
  expect(await queuedCopies(commandId)).toEqual([]);
});
