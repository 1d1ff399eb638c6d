import { randomBytes } from "node:crypto";
import { expect, type Page, test } from "@playwright/test";
import { changeWithCli, cliAsAdmin, importWithCli, repositoryOf } from "../../support/cli.ts";

/**
 * What the pages say about a project's Agent (README: Choosing the Agent), driven as a team would:
 * a repository whose shell script is its Agent, imported and set with the CLI. The script also
 * edits README.md, outside the one path its Task declares: the Change page says so on the
 * ChangeSet, and the Candidate is rejected with the gap "Outside its paths". The project page
 * says which Agent it is and where to change it; the Operations page lists the Agent programs the
 * worker reports (as GET /api/health has them).
 */

const AGENT = `#!/bin/sh
set -e
printf -- '- %s\\n' "$RHUMBATRON_TASK_KEY" >> CHANGELOG.md
printf 'touched by the agent\\n' >> README.md
`;

const files = {
  "CHANGELOG.md": "# Changes\n",
  "README.md": "# A project\n",
  "tools/agent.sh": AGENT,
  "test/changelog.test.js": [
    'const { test } = require("node:test");',
    'const assert = require("node:assert");',
    'const { readFileSync } = require("node:fs");',
    'test("the changelog starts with its heading", () => {',
    '  assert.match(readFileSync("CHANGELOG.md", "utf8"), /^# Changes\\n/);',
    "});",
    "",
  ].join("\n"),
  ".rhumbatron/checks.yml": [
    "version: 1",
    "checks:",
    "  - id: test",
    "    run: [node, --test, test/changelog.test.js]",
    "    timeout: 60",
    "",
  ].join("\n"),
};

/** How far the document is wider than the viewport (0: it does not overflow). */
async function pageOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = document.scrollingElement ?? document.documentElement;
    return root.scrollWidth - window.innerWidth;
  });
}

test("a command Agent's edit outside its declared path is shown on the ChangeSet and is the Candidate's gap; the project and Operations pages name the Agent and the Agent programs", async ({
  page,
}) => {
  test.setTimeout(600_000);
  const cli = await cliAsAdmin(page.request);
  const source = await repositoryOf(files);
  const projectId = await importWithCli(cli, `agent-outside-${randomBytes(3).toString("hex")}`, source.dir);
  const set = await cli.run("projects", "agent", projectId, "--command", "--", "sh", "tools/agent.sh");
  expect(set.code, set.stderr).toBe(0);

  await test.step("the project page says which Agent works its Tasks and where to change it", async () => {
    await page.goto(`/projects/${projectId}`);
    const agent = page.getByTestId("project-agent");
    await expect(agent).toContainText("Agent: command: sh tools/agent.sh (900 s)");
    await expect(agent).toContainText(`rhumbatron projects agent ${projectId}`);
  });

  const { watch, end, changeId } = await changeWithCli(
    cli,
    projectId,
    {
      title: "Note the release",
      riskTier: "low",
      tasks: [{ key: "note", title: "Note the release", intents: { paths: ["CHANGELOG.md"] } }],
    },
    false,
  );
  expect(watch.code, "a rejected Candidate is exit 2").toBe(2);
  expect(end.tasks).toEqual([expect.objectContaining({ key: "note", state: "completed" })]);
  expect(end.candidate).toEqual(expect.objectContaining({ status: "rejected" }));
  const candidateId = end.candidate?.id ?? "";

  for (const width of [1366, 390]) {
    await test.step(`at ${width} px the Change page says the ChangeSet edited outside its declared paths`, async () => {
      await page.setViewportSize({ width, height: 844 });
      await page.goto(`/projects/${projectId}/changes/${changeId}`);
      const note = page.getByTestId("changeset-outside-paths");
      await expect(note).toHaveCount(1);
      await expect(note).toContainText("Edited outside its Task's declared paths: README.md");
      await expect(note).toContainText("The gate counts this as a gap");
      await expect(page.getByTestId("task-node-note")).toHaveAttribute("data-state", "completed");
      // A command Agent keeps no transcript: its run offers none.
      await expect(page.getByTestId("agent-run").first()).toBeVisible();
      await expect(page.getByTestId("transcript-toggle")).toHaveCount(0);
      expect(await pageOverflow(page)).toBe(0);
    });
  }

  await test.step("the Candidate page shows the gap: Outside its paths", async () => {
    await page.setViewportSize({ width: 1366, height: 844 });
    await page.goto(`/projects/${projectId}/candidates/${candidateId}`);
    const gap = page.getByTestId("gap-declared-paths");
    await expect(gap).toHaveAttribute("data-gap-kind", "outside_paths");
    await expect(gap).toContainText("Outside its paths");
    await expect(gap).toContainText("README.md");
  });

  await test.step("the Operations page lists the Agent programs the worker reports", async () => {
    const health = (await (await page.request.get("/api/health")).json()) as {
      worker: { agentPrograms: { name: string; package: string; version: string }[] } | null;
    };
    const programs = health.worker?.agentPrograms ?? [];
    for (const width of [1366, 390]) {
      await page.setViewportSize({ width, height: 844 });
      await page.goto("/operations");
      const panel = page.getByTestId("operations-agent-programs");
      await expect(panel).toContainText("Agent programs");
      if (programs.length === 0) {
        await expect(page.getByTestId("agent-programs")).toHaveAttribute("data-state", "empty");
        await expect(panel).toContainText("npm run setup -- --agent-programs installs Claude Code and Codex");
      } else {
        await expect(page.getByTestId("agent-programs")).toHaveAttribute("data-state", "ready");
        for (const p of programs) {
          await expect(page.getByTestId(`agent-program-${p.name}`)).toContainText(`${p.package}@${p.version}`);
        }
      }
      expect(await pageOverflow(page)).toBe(0);
    }
  });
});
