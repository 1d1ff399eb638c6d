import type { Command } from "commander";
import { RhumbatronError } from "../errors.ts";
import {
  formatContextPacket,
  formatLanding,
  formatLandingQueue,
  formatQueueStatus,
  formatTransition,
  formatWatchEnd,
} from "../format.ts";
import { formatChange } from "../format-change.ts";
import { parseChangeJson } from "../work-graph.ts";
import { type Cli, EXIT, Exit, positiveInt, readText } from "./shared.ts";

/** `rhumbatron change …` and `rhumbatron queue …`. */
export function addChangesCommands(program: Command, cli: Cli): void {
  const change = program.command("change").description("Changes and their Work Graphs");
  changeCreate(change, cli);
  changeLand(change, cli);
  changeCancel(change, cli);
  changeAttempts(change, cli);
  changePick(change, cli);
  changeContext(change, cli);
  changeWatch(change, cli);
  changeShow(change, cli);
  const queue = program.command("queue").description("the landing queue");
  queueList(queue, cli);
  queueStates(queue, cli);
  queueFront(queue, cli);
  queuePriority(queue, cli);
}

function changeCreate(change: Command, cli: Cli): void {
  const { setup } = cli;
  change
    .command("create")
    .description("ask for a Change from a Work Graph file (checked locally before it is sent)")
    .requiredOption("--project <id>", "the project to change")
    .requiredOption("--file <path>", "the Change and its Work Graph as JSON")
    .option("--request-id <id>", "idempotency key: a repeat with the same key returns the first Change")
    .option("--land", "land when ready: promote it without another click once verified (and approved)")
    .action(async (opts: { project: string; file: string; requestId?: string; land?: boolean }, cmd: Command) => {
      const { client, print } = setup(cmd);
      const input = parseChangeJson(await readText(opts.file), opts.file);
      const r = await client.createChange(opts.project, input, {
        ...(opts.requestId ? { clientRequestId: opts.requestId } : {}),
        ...(opts.land ? { land: true } : {}),
      });
      print(r, () =>
        [
          `${r.created ? "created" : "already created (same request id)"}: change ${r.changeId} (request id ${r.clientRequestId})`,
          `follow it: rhumbatron change watch ${r.changeId}`,
        ].join("\n"),
      );
    });
}

function changeLand(change: Command, cli: Cli): void {
  const { setup } = cli;
  change
    .command("land")
    .description("land the Change when it is ready (verified, and approved where policy asks); --off stops that")
    .argument("<changeId>")
    .option("--off", "do not land it by itself")
    .action(async (changeId: string, opts: { off?: boolean }, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.setLanding(changeId, !opts.off);
      print(r, () => formatLanding(changeId, r));
    });
}

function changeCancel(change: Command, cli: Cli): void {
  const { setup } = cli;
  change
    .command("cancel")
    .description("cancel a Change that is not final: its Agent runs stop and its open Candidates are cancelled")
    .argument("<changeId>")
    .requiredOption("--reason <text>", "why (shown on the Change)")
    .action(async (changeId: string, opts: { reason: string }, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.cancelChange(changeId, opts.reason);
      print(r, () =>
        r.candidates.length
          ? `cancelled change ${changeId} and its Candidates ${r.candidates.join(", ")}`
          : `cancelled change ${changeId}`,
      );
    });
}

function changeAttempts(change: Command, cli: Cli): void {
  const { setup } = cli;
  change
    .command("attempts")
    .description("a Task's attempts side by side: Agent, run, lines changed, Candidate, checks, tokens and cost")
    .argument("<changeId>")
    .action(async (changeId: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.attempts(changeId);
      print(r, () =>
        r === null
          ? `no Task of ${changeId} asked for attempts`
          : [
              `Task ${r.taskKey}: ${r.attempts.length} attempts, picked ${r.picked === null ? `by ${r.rule === "person" ? "a person (rhumbatron change pick)" : `the rule ${r.rule}`}, not yet` : `attempt ${r.picked}`}`,
              ...r.attempts.map((a) =>
                [
                  `${a.attempt === r.picked ? "*" : " "} ${a.attempt}  ${a.agent}`,
                  `run ${a.run?.status ?? "not started"}${a.run?.seconds != null ? ` in ${a.run.seconds} s` : ""}`,
                  a.changeSet ? `${a.changeSet.changedLines} lines in ${a.changeSet.paths} files` : "no ChangeSet",
                  a.candidate
                    ? `${a.candidate.id} ${a.candidate.status} (${a.candidate.passed} passed, ${a.candidate.failed} failed)`
                    : "no Candidate",
                  ...(a.tokens !== null ? [`${a.tokens} tokens`] : []),
                  ...(a.costUsd !== null ? [`$${a.costUsd.toFixed(4)}`] : []),
                ].join("  "),
              ),
            ].join("\n"),
      );
    });
}

function changePick(change: Command, cli: Cli): void {
  const { setup } = cli;
  change
    .command("pick")
    .description("pick the attempt that goes on (approver token): the other attempts' open Candidates are cancelled")
    .argument("<changeId>")
    .argument("<attempt>", "the attempt's number (rhumbatron change attempts)")
    .action(async (changeId: string, attempt: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const n = Number(attempt);
      if (!Number.isInteger(n) || n < 1)
        throw new RhumbatronError("BAD_REQUEST", "give the attempt's number, 1 or more");
      const r = await client.pickAttempt(changeId, n);
      print(
        r,
        () =>
          `picked attempt ${r.picked} of ${changeId}${r.cancelled.length ? `; cancelled ${r.cancelled.join(", ")}` : ""}`,
      );
    });
}

function changeContext(change: Command, cli: Cli): void {
  const { setup } = cli;
  change
    .command("context")
    .description("the Context Packet an Agent run was given: each file, why it was picked, what did not fit")
    .argument("<runId>")
    .action(async (runId: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.contextPacket(runId);
      print(r, () => formatContextPacket(r));
    });
}

function changeShow(change: Command, cli: Cli): void {
  const { setup } = cli;
  change
    .command("show")
    .description("a Change: its status, its Tasks and its newest Candidate, with the Task that broke it if one did")
    .argument("<changeId>")
    .action(async (changeId: string, _opts: unknown, cmd: Command) => {
      const { client, print } = setup(cmd);
      const [detail, candidates] = await Promise.all([client.getChange(changeId), client.changeCandidates(changeId)]);
      print({ change: detail, candidates }, () => formatChange(detail, candidates));
    });
}

function changeWatch(change: Command, cli: Cli): void {
  const { setup, io } = cli;
  change
    .command("watch")
    .description("print Task state changes until the Change or its Candidate is final")
    .argument("<changeId>")
    .option("--interval <ms>", "time between polls in milliseconds", positiveInt, 2000)
    .action(async (changeId: string, opts: { interval: number }, cmd: Command) => {
      const { client, json, print } = setup(cmd);
      const r = await client.watchChange(
        changeId,
        (u) => {
          for (const t of u.transitions) io.out(json ? JSON.stringify(t) : formatTransition(t));
        },
        { intervalMs: opts.interval },
      );
      print({ outcome: r.outcome, ok: r.ok, change: r.change, tasks: r.tasks, candidate: r.candidate }, () =>
        formatWatchEnd(r),
      );
      if (!r.ok) throw new Exit(EXIT.refused);
    });
}

function queueList(queue: Command, cli: Cli): void {
  const { setup } = cli;
  queue
    .command("list")
    .description("each Change that lands when ready: its position, what it waits for, since when")
    .requiredOption("--project <id>", "the project")
    .action(async (opts: { project: string }, cmd: Command) => {
      const { client, print } = setup(cmd);
      const [list, status] = await Promise.all([
        client.landingQueue(opts.project),
        client.landingQueueStatus(opts.project),
      ]);
      print(list, () => `${formatQueueStatus(status)}\n${formatLandingQueue(list)}`);
    });
}

function queueStates(queue: Command, cli: Cli): void {
  const { setup } = cli;
  for (const [name, state, about] of [
    ["pause", "paused", "nothing lands until it is resumed (admin)"],
    ["drain", "draining", "only what was verifying when the drain began lands; nothing that starts later (admin)"],
    ["resume", "running", "lands what is ready, in queue order, and goes on (admin)"],
  ] as const) {
    queue
      .command(name)
      .description(`${name} the project's landing queue: ${about}`)
      .requiredOption("--project <id>", "the project")
      .action(async (opts: { project: string }, cmd: Command) => {
        const { client, print } = setup(cmd);
        const r = await client.setLandingQueue(opts.project, state);
        print(r, () =>
          r.changed
            ? `the landing queue of ${opts.project} is ${r.state} (was ${r.previous})${r.landing.length ? `; landing now: ${r.landing.join(", ")}` : ""}`
            : `the landing queue of ${opts.project} is already ${r.state}`,
        );
      });
  }
}

function queueFront(queue: Command, cli: Cli): void {
  const { setup } = cli;
  queue
    .command("front")
    .description("move a waiting Change to the front of its project's landing queue: it lands first once ready (admin)")
    .argument("<changeId>")
    .action(async (changeId: string, _opts: unknown, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.setLandingPriority(changeId, "front");
      print(r, () => `${changeId} is at the front of its landing queue (priority ${r.priority}, was ${r.previous})`);
    });
}

function queuePriority(queue: Command, cli: Cli): void {
  const { setup } = cli;
  queue
    .command("priority")
    .description("give a waiting Change a priority, 0 to 1000: higher lands first among the ready ones (admin)")
    .argument("<changeId>")
    .argument("<priority>")
    .action(async (changeId: string, priority: string, _opts: unknown, cmd: Command) => {
      const { client, print } = setup(cmd);
      const n = Number(priority);
      if (!Number.isInteger(n) || n < 0 || n > 1000)
        throw new RhumbatronError("BAD_REQUEST", "give the priority as a whole number from 0 to 1000");
      const r = await client.setLandingPriority(changeId, n);
      print(r, () =>
        r.changed
          ? `${changeId} has priority ${r.priority} (was ${r.previous})`
          : `${changeId} has priority ${r.priority} already`,
      );
    });
}
