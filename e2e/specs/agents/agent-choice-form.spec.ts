import { expect, test } from "@playwright/test";
import { hydrated } from "../../support/hydrated.ts";
import { DEMO_TENANT, trpcData, trpcQuery } from "../../support/trpc.ts";
import { provisionedProject } from "../landing/fixtures/landing-api.ts";

/**
 * The project's Agent chosen on its page (docs/agents.md, Choosing the Agent): an admin picks a kind
 * and fills in what it needs; what the server refuses is said beside the form and changes nothing;
 * what it takes is what the page, and the API, then say the Agent is.
 */
async function agentOf(page: import("@playwright/test").Page, projectId: string) {
  const o = await trpcData<{ project: { agent: unknown } }>(
    await trpcQuery(page.request, "projects.overview", { tenantId: DEMO_TENANT, projectId }),
  );
  return o.project.agent;
}

test("an admin sets the project's Agent on its page: a refused command changes nothing, a command and then a program are saved", async ({
  page,
}) => {
  const projectId = await provisionedProject(page.request, "agent-form");
  await page.goto(`/projects/${projectId}`);
  await hydrated(page);
  await expect(page.getByTestId("project-agent")).toContainText("the worker's default");
  await page.getByTestId("agent-choice").locator("summary").click();
  const form = page.getByTestId("agent-choice-form");

  await test.step("a path as the program is refused beside the form, and nothing changes", async () => {
    await form.getByTestId("agent-kind").selectOption("command");
    await form.getByTestId("agent-argv").fill("/bin/sh tools/agent.sh");
    await form.getByTestId("agent-choice-save").click();
    await expect(form.getByTestId("agent-choice-error")).toContainText("a bare program name");
    expect(await agentOf(page, projectId)).toBeNull();
  });

  await test.step("a command with its limit and a secret is saved and named on the page", async () => {
    await form.getByTestId("agent-argv").fill("sh tools/agent.sh");
    await form.getByTestId("agent-timeout").fill("120");
    await form.getByTestId("agent-secrets").fill("DEPLOY_TOKEN");
    await form.getByTestId("agent-choice-save").click();
    await expect(form.getByTestId("agent-choice-saved")).toBeVisible();
    await expect(page.getByTestId("project-agent")).toContainText(
      "command: sh tools/agent.sh (120 s, secrets DEPLOY_TOKEN)",
    );
    expect(await agentOf(page, projectId)).toEqual({
      kind: "command",
      argv: ["sh", "tools/agent.sh"],
      timeoutSeconds: 120,
      allowOutsidePaths: false,
      secrets: ["DEPLOY_TOKEN"],
    });
  });

  await test.step("a program whose endpoint carries a key is refused; with the key as a secret's name it is saved", async () => {
    await form.getByTestId("agent-kind").selectOption("program");
    await form.getByTestId("agent-program").selectOption("codex");
    await form.getByTestId("agent-model").fill("gpt-5.5");
    await form.getByTestId("agent-endpoint").fill("https://models.example.com/?key=sk-123");
    await form.getByTestId("agent-key-secret").fill("OPENAI_API_KEY");
    await form.getByTestId("agent-choice-save").click();
    await expect(form.getByTestId("agent-choice-error")).toContainText("carries no credentials, query or fragment");
    expect(await agentOf(page, projectId)).toMatchObject({ kind: "command" });
    await form.getByTestId("agent-endpoint").fill("https://models.example.com");
    await form.getByTestId("agent-max-tokens").fill("50000");
    await form.getByTestId("agent-choice-save").click();
    await expect(page.getByTestId("project-agent")).toContainText(
      "codex: gpt-5.5 at https://models.example.com, key OPENAI_API_KEY (120 s, 50000 tokens)",
    );
  });
});
