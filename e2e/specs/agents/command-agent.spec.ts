import { randomBytes } from "node:crypto";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { changeWithCli, cliAsAdmin, generationReaches, git, importWithCli, repositoryOf } from "../../support/cli.ts";
import { DEMO_TENANT, trpcData, trpcMutation } from "../../support/trpc.ts";

/**
 * A generic command Agent (docs/agents.md, Choosing the Agent), driven from outside as a team would: a
 * repository whose own shell script is its Agent, imported with the CLI, the script made the
 * project's Agent with `rhumbatron projects agent`, and Changes asked for with `change create`.
 * One lands: canonical main, cloned over git HTTP, holds what the script wrote. One whose script
 * exits non-zero, one that runs past its limit, one that edits the checks file and one that writes
 * the tenant secret it was given into the tree each end with the Task failed and no Candidate:
 * nothing was published, and the secret's value is on no page.
 */

/** The project's Agent: reads its Task from the file it is given and acts on the Task's key. */
const AGENT = `#!/bin/sh
set -e
title=$(head -n 1 "$RHUMBATRON_TASK_FILE" | sed 's/^# //')
case "$RHUMBATRON_TASK_KEY" in
  fail) echo "the model said no" >&2; exit 4 ;;
  hang) exec sleep 600 ;;
  gate) printf 'version: 1\\nchecks: []\\n' > .rhumbatron/checks.yml ;;
  leak) printf '%s\\n' "$DEPLOY_TOKEN" >> CHANGELOG.md ;;
esac
printf -- '- %s\\n' "$title" >> CHANGELOG.md
echo "added: $title"
`;

const files = {
  "CHANGELOG.md": "# Changes\n",
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

const change = (title: string, key: string) => ({
  title,
  riskTier: "low",
  tasks: [{ key, title, intents: { paths: ["CHANGELOG.md"] } }],
});

test("a shell script as the project's Agent: its Change lands; a failing, a hanging, a gate-editing and a secret-leaking run publish nothing", async ({
  page,
}) => {
  test.setTimeout(600_000);
  const cli = await cliAsAdmin(page.request);
  const source = await repositoryOf(files);
  const projectId = await importWithCli(cli, `agent-script-${randomBytes(3).toString("hex")}`, source.dir);

  const token = `tok-${randomBytes(12).toString("hex")}`;
  await trpcData(
    await trpcMutation(page.request, "secrets.set", { tenantId: DEMO_TENANT, name: "DEPLOY_TOKEN", value: token }),
  );
  const set = await cli.run(
    ...["projects", "agent", projectId, "--command", "--timeout", "5", "--secret", "DEPLOY_TOKEN"],
    ...["--", "sh", "tools/agent.sh"],
  );
  expect(set.code, set.stderr).toBe(0);
  expect(set.stdout).toContain("agent command: sh tools/agent.sh (5 s, secrets DEPLOY_TOKEN)");
  expect((await cli.run("projects", "show", projectId)).stdout).toContain("agent       command: sh tools/agent.sh");

  await test.step("a Change worked by the script is verified and lands; main holds its line", async () => {
    const { watch, end } = await changeWithCli(cli, projectId, change("Say hello in the changelog", "note"), true);
    expect(watch.code, watch.stderr).toBe(0);
    expect(end.tasks).toEqual([expect.objectContaining({ key: "note", state: "completed" })]);
    await generationReaches(cli, projectId, 1);
    const { url } = await trpcData<{ url: string }>(
      await trpcMutation(page.request, "projects.cloneAccess", { tenantId: DEMO_TENANT, projectId }),
    );
    const clone = join(await mkdtemp(join(tmpdir(), "rh-e2e-agent-clone-")), "repo");
    await git(tmpdir(), "clone", "-q", url, clone);
    expect(await readFile(join(clone, "CHANGELOG.md"), "utf8")).toBe("# Changes\n- Say hello in the changelog\n");
    expect(await git(clone, "log", "-1", "--format=%s")).not.toBe("");
  });

  for (const [key, why, said] of [
    ["fail", "exits 4", /sh exited 4; nothing was published\s+the model said no/],
    ["hang", "runs past its 5 s", /stopped: sh ran past its limit of 5 s and was killed; nothing was published/],
    ["gate", "edits the checks file", /refused: the Agent edited the checks file \(\.rhumbatron\)/],
    [
      "leak",
      "writes its secret into the tree",
      /refused: the Agent wrote the value of the secret DEPLOY_TOKEN into a file of its diff; nothing was published/,
    ],
  ] as const) {
    await test.step(`a run whose script ${why} fails its Task, says why on the Change page, and makes no Candidate`, async () => {
      const { watch, end, changeId } = await changeWithCli(cli, projectId, change(`Task that ${why}`, key), false);
      expect(watch.code, "a failed Change is exit 2").toBe(2);
      expect(end.outcome).toBe("failed");
      expect(end.tasks).toEqual([expect.objectContaining({ key, state: "failed" })]);
      expect(end.candidate).toBeNull();
      await page.goto(`/projects/${projectId}/changes/${changeId}`);
      await expect(page.getByTestId("agent-run-error").first()).toContainText(said);
      expect(await page.content()).not.toContain(token);
    });
  }
  // Nothing of the failed runs reached main.
  expect((await cli.json<{ canonicalGeneration: number }>("projects", "show", projectId)).canonicalGeneration).toBe(1);
});
