import { expect, test } from "@playwright/test";
import { hydrated } from "../../support/hydrated.ts";
import { createChange, overview, provisionedProject, waitUntil, writeTask } from "../landing/fixtures/landing-api.ts";

/**
 * Attempts side by side (docs/attempts.md), as an approver sees them: a Task asks for two attempts,
 * the scripted Agent and a command Agent that writes the file its own way. The Change page shows both
 * side by side, each with its run, diff size and verified Candidate; nothing lands until a person
 * picks one there, and then that one lands.
 */
const PATH = "notes/attempt.md";

test("a Task's two attempts are shown side by side; the approver picks the second there and it lands", async ({
  page,
}) => {
  test.setTimeout(300_000);
  const projectId = await provisionedProject(page.request, "attempts");
  const task = {
    ...writeTask("note", PATH, "by the script\n"),
    attempts: {
      agents: [
        { kind: "scripted" },
        {
          kind: "command",
          argv: ["sh", "-c", `mkdir -p notes && printf 'by the command\\nand a second line\\n' > ${PATH}`],
          timeoutSeconds: 60,
          allowOutsidePaths: false,
          secrets: [],
        },
      ],
      pick: "person",
    },
  };
  const changeId = await createChange(page.request, projectId, {
    title: "Two attempts",
    tasks: [task as never],
    land: true,
  });

  await page.goto(`/projects/${projectId}/changes/${changeId}`);
  await hydrated(page);
  const panel = page.getByTestId("attempts-panel");
  await expect(panel).toContainText("Attempts of Task note");
  await expect(panel.getByTestId("attempts-rule")).toContainText(
    "Nothing lands until one is picked: a person picks one",
  );
  // Both verified, each with its own run and diff, shown side by side.
  for (const n of [1, 2]) {
    await expect(panel.getByTestId(`attempt-${n}`).getByTestId("attempt-checks")).toContainText("verified", {
      timeout: 240_000,
    });
  }
  await expect(panel.getByTestId("attempt-1").getByTestId("attempt-diff")).toHaveText("1 lines in 1 files");
  await expect(panel.getByTestId("attempt-2").getByTestId("attempt-diff")).toHaveText("2 lines in 1 files");
  await expect(panel.getByTestId("attempt-2")).toContainText("command");
  const one = await panel.getByTestId("attempt-1").boundingBox();
  const two = await panel.getByTestId("attempt-2").boundingBox();
  expect(one && two && Math.abs(one.y - two.y) < 2, "the two attempts sit on one row").toBe(true);
  // Nothing landed before the pick.
  expect((await overview(page.request, projectId)).project.canonicalGeneration).toBe(0);

  await panel.getByTestId("attempt-pick-2").click();
  await expect(panel.getByTestId("attempt-2")).toHaveAttribute("data-picked", "true");
  await expect(panel.getByTestId("attempts-rule")).toContainText("Attempt 2 was picked");
  const landed = await waitUntil(
    "the picked attempt lands",
    () => overview(page.request, projectId),
    (o) => o.project.canonicalGeneration === 1,
    120_000,
  );
  expect(landed.generations.find((g) => g.generation === 1)?.changeId).toBe(changeId);
});
