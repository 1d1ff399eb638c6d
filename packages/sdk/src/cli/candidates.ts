import type { Command } from "commander";
import { formatTaskTranscripts } from "../format.ts";
import { formatCandidate, formatCandidateChecks, formatCandidates, formatPromote } from "../format-candidate.ts";
import { type Cli, collect, EXIT, Exit, fileToPublish, positiveInt } from "./shared.ts";

/** `rhumbatron task …`, `candidates` and `candidate …`. */
export function addCandidatesCommands(program: Command, cli: Cli): void {
  const task = program.command("task").description("Tasks of a Change");
  taskRetry(task, cli);
  taskTranscript(task, cli);
  taskPublish(task, cli);
  candidatesList(program, cli);
  const candidate = program
    .command("candidate")
    .description("one Candidate: show, approve, reject, rerun a check, promote");
  candidateShow(candidate, cli);
  candidateChecks(candidate, cli);
  candidateApprove(candidate, cli);
  candidateReject(candidate, cli);
  candidateRerun(candidate, cli);
  candidatePromote(candidate, cli);
}

function taskRetry(task: Command, cli: Cli): void {
  const { setup } = cli;
  task
    .command("retry")
    .description(
      "a new attempt of a failed or blocked Task, or of a completed one whose Change's newest Candidate conflicted or was rejected (a new Candidate on the current generation follows)",
    )
    .argument("<taskId>")
    .action(async (taskId: string, _opts: unknown, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.retryTask(taskId);
      print(r, () => `retrying task ${r.taskId}: attempt ${r.attempt}; follow it with rhumbatron change watch`);
    });
}

function taskTranscript(task: Command, cli: Cli): void {
  const { setup } = cli;
  task
    .command("transcript")
    .description(
      "what a program Agent did on the Task, run by run (newest first): messages, tool calls, commands with exit codes, files edited, tokens, cost, hosts reached",
    )
    .argument("<taskId>")
    .action(async (taskId: string, _opts: unknown, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.taskTranscript(taskId);
      print(r, () => formatTaskTranscripts(r));
    });
}

function taskPublish(task: Command, cli: Cli): void {
  const { setup } = cli;
  task
    .command("publish")
    .description(
      "publish your own fix as the Task's ChangeSet (a ready, failed or blocked Task): whole text files and deletions, at most 512 KB, checked locally before it is sent",
    )
    .argument("<taskId>")
    .requiredOption("--summary <text>", "what the fix does (the commit's subject)")
    .option(
      "--file <path>",
      "a file to publish, read from --from (repeatable); <repoPath>=<localFile> reads it from elsewhere",
      collect,
      [],
    )
    .option("--delete <path>", "a repository file to delete (repeatable)", collect, [])
    .option("--from <dir>", "the folder --file paths are read from", ".")
    .action(
      async (
        taskId: string,
        opts: { summary: string; file: string[]; delete: string[]; from: string },
        cmd: Command,
      ) => {
        const { client, print } = setup(cmd);
        const files = [
          ...(await Promise.all(opts.file.map((f) => fileToPublish(f, opts.from)))),
          ...opts.delete.map((path) => ({ path, delete: true as const })),
        ];
        const r = await client.publishFixture(taskId, { summary: opts.summary, files });
        print(r, () =>
          [
            `${r.duplicate ? "sent before (the same fix)" : "sent"}: ChangeSet ${r.changeSetId} for task ${taskId} (command ${r.commandId})`,
            `follow it: rhumbatron change watch ${r.changeId}`,
          ].join("\n"),
        );
      },
    );
}

function candidatesList(program: Command, cli: Cli): void {
  const { setup } = cli;
  program
    .command("candidates")
    .description("Candidates of a project")
    .command("list")
    .description("list a project's Candidates, newest first")
    .requiredOption("--project <id>", "the project")
    .option("--limit <n>", "at most this many (1-200)", positiveInt, 50)
    .action(async (opts: { project: string; limit: number }, cmd: Command) => {
      const { client, print } = setup(cmd);
      const list = await client.listCandidates(opts.project, { limit: opts.limit });
      print(list, () => formatCandidates(list));
    });
}

function candidateShow(candidate: Command, cli: Cli): void {
  const { setup } = cli;
  candidate
    .command("show")
    .description("plan, Evidence, gaps, approval and the composed tree hash")
    .argument("<candidateId>")
    .action(async (id: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const c = await client.getCandidate(id);
      // A Candidate behind the gate of a Change approved before: show what changed since.
      const interdiff = c.approval.required ? await client.approvalInterdiff(id) : null;
      print({ ...c, interdiff }, () => formatCandidate(c, interdiff));
    });
}

function candidateChecks(candidate: Command, cli: Cli): void {
  const { setup } = cli;
  candidate
    .command("checks")
    .description("where the Candidate's checks come from; for detected checks, the checks file to commit")
    .argument("<candidateId>")
    .action(async (id: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.candidateChecks(id);
      print(r, () => formatCandidateChecks(r));
    });
}

function candidateApprove(candidate: Command, cli: Cli): void {
  const { setup } = cli;
  candidate
    .command("approve")
    .description("approve exactly this composed tree (approver role)")
    .argument("<candidateId>")
    .requiredOption("--tree <hash>", "the composed tree hash `candidate show` prints (40 hex digits)")
    .option("--note <text>", "a note kept with the approval")
    .action(async (id: string, opts: { tree: string; note?: string }, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.approve(id, opts.tree, opts.note);
      print(r, () =>
        r.already
          ? `already approved ${id} for tree ${r.decision.treeHash} (by you); nothing changed`
          : `approved ${id} for tree ${r.decision.treeHash}; next: rhumbatron candidate promote ${id}`,
      );
    });
}

function candidateReject(candidate: Command, cli: Cli): void {
  const { setup } = cli;
  candidate
    .command("reject")
    .description("reject the Candidate, saying why (approver role); the first decision is final")
    .argument("<candidateId>")
    .requiredOption("--tree <hash>", "the composed tree hash `candidate show` prints (40 hex digits)")
    .requiredOption("--note <text>", "why it is rejected")
    .action(async (id: string, opts: { tree: string; note: string }, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.reject(id, opts.tree, opts.note);
      print(r, () =>
        r.already
          ? `already rejected ${id} (tree ${r.decision.treeHash}, by you); nothing changed`
          : `rejected ${id} (tree ${r.decision.treeHash})`,
      );
    });
}

function candidateRerun(candidate: Command, cli: Cli): void {
  const { setup } = cli;
  candidate
    .command("rerun")
    .description("run one check of a rejected Candidate again (its latest Evidence ended in error or fail)")
    .argument("<candidateId>")
    .argument("<checkId>", "the check, as `candidate show` lists it (e.g. unit)")
    .action(async (id: string, checkId: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.rerunCheck(id, checkId);
      print(
        r,
        () =>
          `rerunning ${checkId} of ${id} (rerun ${r.rerun}, ${r.remaining} left); follow it with rhumbatron candidate show ${id}`,
      );
    });
}

function candidatePromote(candidate: Command, cli: Cli): void {
  const { setup } = cli;
  candidate
    .command("promote")
    .description("promote a verified (and approved) Candidate to the next canonical generation")
    .argument("<candidateId>")
    .action(async (id: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.promote(id);
      print(r, () => formatPromote(id, r));
      if (r.outcome === "blocked") throw new Exit(EXIT.refused);
      if (r.outcome === "stale") throw new Exit(EXIT.stale);
    });
}
