import { expect, type Page } from "@playwright/test";
import { hydrated } from "./hydrated.ts";

/** One step of a Task's scripted edit plan, as the new-Change form edits it. */
export type StepSpec =
  | { op: "write"; path: string; content: string }
  | { op: "replace"; path: string; find: string; replace: string }
  | { op: "delete"; path: string }
  | { op: "run"; argv: string };

export interface TaskSpec {
  key: string;
  title: string;
  dependsOn?: string[];
  paths?: string[];
  prefixes?: string[];
  steps: StepSpec[];
}

export interface ChangeSpec {
  title: string;
  description?: string;
  riskTier: "low" | "medium" | "high" | "critical";
  invariants?: string[];
  tasks: TaskSpec[];
}

/**
 * Fills the new-Change form (/projects/<id>/changes/new) through its test ids, as a person would:
 * the terms, then one Task editor per Task (the form starts with one), its dependencies, resource
 * intents and edit plan steps.
 */
export async function fillChangeForm(page: Page, change: ChangeSpec): Promise<void> {
  const form = page.getByTestId("new-change-form");
  await expect(form).toBeVisible();
  await hydrated(page);
  await form.getByTestId("change-title-input").fill(change.title);
  await form.getByTestId("change-description-input").fill(change.description ?? "");
  await form.getByTestId("risk-tier-select").selectOption(change.riskTier);
  await form.getByTestId("invariants-input").fill((change.invariants ?? []).join("\n"));

  for (const [i, task] of change.tasks.entries()) {
    if (i > 0) await form.getByTestId("add-task").click();
    const editor = form.getByTestId(`task-editor-${i}`);
    await expect(editor).toBeVisible();
    await editor.getByTestId(`task-key-input-${i}`).fill(task.key);
    await editor.getByTestId(`task-title-input-${i}`).fill(task.title);
    for (const dep of task.dependsOn ?? []) await editor.getByTestId(`task-depends-${i}-${dep}`).check();
    await editor.getByTestId(`task-paths-input-${i}`).fill((task.paths ?? []).join("\n"));
    await editor.getByTestId(`task-prefixes-input-${i}`).fill((task.prefixes ?? []).join("\n"));
    for (const [j, step] of task.steps.entries()) {
      await editor.getByTestId(`add-step-op-${i}`).selectOption(step.op);
      await editor.getByTestId(`add-step-${i}`).click();
      const at = `step-${i}-${j}`;
      await expect(editor.getByTestId(at)).toHaveAttribute("data-op", step.op);
      if (step.op === "run") {
        await editor.getByTestId(`${at}-argv`).fill(step.argv);
        continue;
      }
      await editor.getByTestId(`${at}-path`).fill(step.path);
      if (step.op === "write") await editor.getByTestId(`${at}-content`).fill(step.content);
      if (step.op === "replace") {
        await editor.getByTestId(`${at}-find`).fill(step.find);
        await editor.getByTestId(`${at}-replace`).fill(step.replace);
      }
    }
  }
}

/** Submits the form and waits for the new Change's page; returns its ID. Names what the form refused. */
export async function submitChange(page: Page, projectId: string): Promise<string> {
  await page.getByTestId("submit-change").click();
  const changePage = new RegExp(`/projects/${projectId}/changes/(?!new$)([^/?#]+)$`);
  try {
    await page.waitForURL(changePage, { timeout: 20_000 });
  } catch (err) {
    const problems = await page.locator('[data-testid="form-errors"], [data-testid^="field-error-"]').allInnerTexts();
    throw new Error(`e2e: the Change was not created: ${problems.join(" | ") || String(err)}`);
  }
  const changeId = changePage.exec(new URL(page.url()).pathname)?.[1];
  if (!changeId) throw new Error(`e2e: no Change ID in ${page.url()}`);
  return changeId;
}
