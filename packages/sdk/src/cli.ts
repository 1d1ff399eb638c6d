import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { AGENT_PROGRAM_NAMES, AGENT_TIMEOUT_BOUNDS, type AgentChoice, describeAgentChoice } from "@rhumbatron/core";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { createRhumbatronClient } from "./client.ts";
import { RhumbatronError, type RhumbatronErrorCode } from "./errors.ts";
import {
  formatCandidate,
  formatCandidateChecks,
  formatCandidates,
  formatContextPacket,
  formatLanding,
  formatLandingQueue,
  formatPolicy,
  formatPolicyHistory,
  formatPolicyUpdate,
  formatProject,
  formatProjects,
  formatPromote,
  formatQueueStatus,
  formatSandboxBudget,
  formatSandboxMeter,
  formatTaskTranscripts,
  formatTransition,
  formatWatchEnd,
  formatWhoami,
} from "./format.ts";
import { formatProjectChecks } from "./format-project-checks.ts";
import { formatInbox } from "./inbox.ts";
import { parsePolicyJson } from "./policy.ts";
import { formatSecrets } from "./secrets.ts";
import { parseChangeJson } from "./work-graph.ts";

/** The CLI's exit codes (docs/cli.md). */
export const EXIT = { ok: 0, usage: 1, refused: 2, stale: 3, auth: 4, unreachable: 5 } as const;

const EXIT_FOR: Record<RhumbatronErrorCode, number> = {
  UNAUTHORIZED: EXIT.auth,
  FORBIDDEN: EXIT.auth,
  BAD_REQUEST: EXIT.usage,
  NOT_FOUND: EXIT.usage,
  CONFLICT: EXIT.refused,
  PRECONDITION_FAILED: EXIT.refused,
  TOO_MANY_REQUESTS: EXIT.refused,
  UNAVAILABLE: EXIT.unreachable,
  UNREACHABLE: EXIT.unreachable,
  BAD_RESPONSE: EXIT.unreachable,
  INTERNAL: EXIT.usage,
  ABORTED: EXIT.usage,
};

export const DEFAULT_URL = "http://localhost:3000";

const HELP_FOOTER = `
Settings: --url or RHUMBATRON_URL (default ${DEFAULT_URL}), --token or RHUMBATRON_TOKEN
(an API token rbt_…, created at <url>/settings/tokens), --tenant or RHUMBATRON_TENANT (optional:
a token acts in exactly one tenant).

Exit codes: 0 ok; 1 usage or input error (bad flags, bad Work Graph, not found); 2 blocked or
refused (promotion blocked, Candidate rejected, Change failed or cancelled, a conflicting
decision); 3 stale (canonical moved past the Candidate's base); 4 auth (token missing, unknown or
revoked, or its role or tenant does not allow the command); 5 server unreachable or unavailable.`;

const SHORT_FOOTER = `
Exit codes: 0 ok, 1 usage/input, 2 blocked/refused, 3 stale, 4 auth, 5 unreachable (rhumbatron --help).`;

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
  /** Everything on standard input (a password given with --password-stdin, a secret with --value-stdin). */
  readStdin?: () => Promise<string>;
}

async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const processIo: CliIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  readStdin: readProcessStdin,
};

interface GlobalOptions {
  url?: string;
  token?: string;
  tenant?: string;
  json?: boolean;
}

/** Thrown by a command to end with a code after it printed its own output. */
class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** Runs the CLI on `argv` (as process.argv: node, script, args…) and returns the exit code. */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof Exit) return err.code;
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    const e =
      err instanceof RhumbatronError
        ? err
        : new RhumbatronError("INTERNAL", String(err).replace(/\s*\n\s*/g, "; "), { cause: err });
    const json = program.opts<GlobalOptions>().json;
    io.err(json ? JSON.stringify({ error: { code: e.code, message: e.message } }) : `error: ${e.message}`);
    return EXIT_FOR[e.code];
  }
}

function buildProgram(io: CliIo): Command {
  const program = new Command("rhumbatron")
    .description("Ask for Changes, follow them and approve and promote their Candidates, from the command line.")
    .addOption(new Option("--url <url>", "the web app's address (env RHUMBATRON_URL)"))
    .addOption(new Option("--token <token>", "API token rbt_… (env RHUMBATRON_TOKEN)"))
    .addOption(new Option("--tenant <idOrSlug>", "tenant to act in; default the token's (env RHUMBATRON_TENANT)"))
    .option("--json", "machine output: JSON on stdout, errors as JSON on stderr")
    .addHelpText("after", HELP_FOOTER)
    .showSuggestionAfterError()
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s.trimEnd()),
      writeErr: (s) => io.err(s.trimEnd()),
      outputError: (s, write) => write(`${s.trim()} (see --help)`),
    });

  /** The client for a command, from flags then environment; no token is an auth error before any request. */
  const setup = (cmd: Command) => {
    const o = cmd.optsWithGlobals<GlobalOptions>();
    const url = o.url ?? io.env.RHUMBATRON_URL ?? DEFAULT_URL;
    const token = o.token ?? io.env.RHUMBATRON_TOKEN;
    const tenant = o.tenant ?? io.env.RHUMBATRON_TENANT;
    if (!token) {
      throw new RhumbatronError(
        "UNAUTHORIZED",
        `no API token: set RHUMBATRON_TOKEN or pass --token; create one at ${url.replace(/\/+$/, "")}/settings/tokens`,
      );
    }
    const client = createRhumbatronClient({ url, token, ...(tenant ? { tenant } : {}) });
    const print = (value: unknown, human: () => string) => io.out(o.json ? JSON.stringify(value) : human());
    return { client, json: Boolean(o.json), print };
  };

  program
    .command("whoami")
    .description("the tenant and role the token acts as")
    .action(async (_opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const w = await client.whoami();
      print(w, () => formatWhoami(w));
    });

  const projects = program.command("projects").description("projects of the tenant");
  projects
    .command("list")
    .description("list the tenant's projects")
    .action(async (_opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const list = await client.listProjects();
      print(list, () => formatProjects(list));
    });
  projects
    .command("show")
    .description("a project's status, source, and why it failed if it did")
    .argument("<id>", "the project ID")
    .action(async (id: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const project = await client.getProject(id);
      print(project, () => formatProject(project));
    });
  projects
    .command("agent")
    .description(
      "the Agent that works the project's Tasks unless a Task names its own: --scripted, --model, --default, --program <claude-code|codex|gemini-cli|opencode> with its model, endpoint and key secret, or --command -- <program> [args...] (admin token)",
    )
    .argument("<id>", "the project ID")
    .argument("[argv...]", "with --command: the program and its arguments, after -- (run in the Sandbox, no shell)")
    .option("--scripted", "replay each Task's edit plan")
    .option("--model", "the tool loop over the worker's model endpoint (AGENT_MODEL_URL)")
    .option("--program <name>", `a coding-agent program the worker installs: ${AGENT_PROGRAM_NAMES.join(", ")}`)
    .option("--model-name <name>", "with --program: the model its endpoint expects")
    .option("--endpoint <url>", "with --program: the model endpoint's base URL, the one place the run may reach")
    .option(
      "--key-secret <NAME>",
      "with --program: the tenant secret holding the endpoint's key (rhumbatron secrets set)",
    )
    .option(
      "--max-tokens <n>",
      "with --program: past this many tokens the run fails and publishes nothing",
      positiveInt,
    )
    .option("--command", "the program given after -- , run in the Sandbox in the Task's checkout")
    .option("--timeout <seconds>", "with --command or --program: its wall time per run", positiveInt)
    .option("--allow-outside-paths", "with --command or --program: it may edit files outside a Task's declared paths")
    .option(
      "--secret <NAME>",
      "with --command: a tenant secret given to each run as the variable NAME (repeat for more)",
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option("--default", "no choice of the project's: the worker's default")
    .action(
      async (
        id: string,
        argv: string[],
        opts: {
          scripted?: boolean;
          model?: boolean;
          program?: string;
          modelName?: string;
          endpoint?: string;
          keySecret?: string;
          maxTokens?: number;
          command?: boolean;
          timeout?: number;
          allowOutsidePaths?: boolean;
          secret: string[];
          default?: boolean;
        },
        cmd: Command,
      ) => {
        const picked = [opts.scripted, opts.model, opts.program !== undefined, opts.command, opts.default].filter(
          Boolean,
        );
        if (picked.length !== 1) {
          throw new RhumbatronError(
            "BAD_REQUEST",
            "give exactly one of --scripted, --model, --program, --command or --default",
          );
        }
        const programOnly = [opts.modelName, opts.endpoint, opts.keySecret, opts.maxTokens];
        if (opts.program === undefined && programOnly.some((o) => o !== undefined)) {
          throw new RhumbatronError(
            "BAD_REQUEST",
            "--model-name, --endpoint, --key-secret and --max-tokens go with --program",
          );
        }
        if (!opts.command && (argv.length > 0 || opts.secret.length > 0)) {
          throw new RhumbatronError("BAD_REQUEST", "a program after -- and --secret go with --command");
        }
        if (!opts.command && opts.program === undefined && (opts.timeout !== undefined || opts.allowOutsidePaths)) {
          throw new RhumbatronError(
            "BAD_REQUEST",
            "--timeout and --allow-outside-paths go with --command or --program",
          );
        }
        if (opts.command && argv.length === 0) {
          throw new RhumbatronError(
            "BAD_REQUEST",
            "--command needs the program after --, e.g. --command -- sh tools/agent.sh",
          );
        }
        if (opts.program !== undefined && (!opts.modelName || !opts.endpoint || !opts.keySecret)) {
          throw new RhumbatronError(
            "BAD_REQUEST",
            "--program needs --model-name, --endpoint and --key-secret, e.g. --program codex --model-name gpt-5.5 --endpoint https://models.example.com --key-secret OPENAI_KEY",
          );
        }
        const timeoutSeconds = opts.timeout ?? AGENT_TIMEOUT_BOUNDS.default;
        const allowOutsidePaths = Boolean(opts.allowOutsidePaths);
        const agent = opts.default
          ? null
          : opts.command
            ? { kind: "command", argv, timeoutSeconds, allowOutsidePaths, secrets: opts.secret }
            : opts.program !== undefined
              ? {
                  kind: "program",
                  program: opts.program,
                  model: opts.modelName,
                  endpoint: opts.endpoint,
                  keySecret: opts.keySecret,
                  timeoutSeconds,
                  allowOutsidePaths,
                  ...(opts.maxTokens !== undefined ? { maxTokens: opts.maxTokens } : {}),
                }
              : { kind: opts.scripted ? "scripted" : "model" };
        const { client, print } = setup(cmd);
        // The server checks the choice (an unknown program, a bad endpoint or secret name is a 400).
        const r = await client.setProjectAgent(id, agent as AgentChoice | null);
        print(r, () => `${id}: agent ${describeAgentChoice(r.agent)}${r.changed ? "" : " (unchanged)"}`);
      },
    );
  projects
    .command("checks")
    .description("where the project's checks come from at its head, what they are, and the latest setup runs")
    .argument("<id>", "the project ID")
    .action(async (id: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.projectChecks(id);
      print(r, () => formatProjectChecks(r));
    });
  projects
    .command("create")
    .description("a new project from the built-in template (the demo shop) at S0 (admin token)")
    .argument("<name>", "the project's name (lowercase letters, digits and '-')")
    .action(async (name: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.createProject(name);
      print(r, () =>
        [
          `${r.projectId}  ${name}: provisioning from the template`,
          `rhumbatron projects show ${r.projectId} says when it is active`,
        ].join("\n"),
      );
    });
  projects
    .command("import")
    .description(
      "a new project from a repository's history: an http(s) URL, a file:// URL or an absolute path on the server (admin token); a private http(s) repository takes --username and the password or token from standard input (--password-stdin) or RHUMBATRON_IMPORT_PASSWORD, never as a flag",
    )
    .argument("<name>", "the project's name (lowercase letters, digits and '-')")
    .option("--from <url>", "the repository: https://…, file:///… or /absolute/path (no user name or password in it)")
    .option(
      "--push",
      "instead of --from: an empty project waiting for you to `git push` a history into it; prints the command, with a one-time token, once",
    )
    .option("--branch <branch>", "the branch whose history becomes main (default: the source's HEAD branch)")
    .option(
      "--submodules",
      "also fetch the submodules its gitlinks name, from the URLs in its .gitmodules (off by default: a gitlink stays a commit id)",
    )
    .option("--username <user>", "the user name for a private http(s) repository")
    .option("--password-stdin", "read the password or token from standard input (else env RHUMBATRON_IMPORT_PASSWORD)")
    .action(
      async (
        name: string,
        opts: {
          from?: string;
          push?: boolean;
          branch?: string;
          username?: string;
          passwordStdin?: boolean;
          submodules?: boolean;
        },
        cmd: Command,
      ) => {
        const { client, print } = setup(cmd);
        if (opts.push) {
          if (
            opts.from !== undefined ||
            opts.branch !== undefined ||
            opts.username !== undefined ||
            opts.passwordStdin ||
            opts.submodules
          )
            throw new RhumbatronError(
              "BAD_REQUEST",
              "--push takes no --from, --branch, --submodules or credentials: the push brings the history",
            );
          const r = await client.createProjectForPush(name);
          print(r, () => formatPushAccess(r.projectId, name, r));
          return;
        }
        if (opts.from === undefined) throw new RhumbatronError("BAD_REQUEST", "give --from <url>, or --push");
        const from = opts.from;
        let credentials: { username: string; password: string } | undefined;
        if (opts.username !== undefined || opts.passwordStdin) {
          if (opts.username === undefined)
            throw new RhumbatronError("BAD_REQUEST", "--password-stdin needs --username <user>");
          const password = opts.passwordStdin
            ? (await (io.readStdin ?? readProcessStdin)()).replace(/\r?\n$/, "")
            : io.env.RHUMBATRON_IMPORT_PASSWORD;
          if (!password)
            throw new RhumbatronError(
              "BAD_REQUEST",
              "--username needs the password or token: pipe it with --password-stdin, or set RHUMBATRON_IMPORT_PASSWORD",
            );
          credentials = { username: opts.username, password };
        }
        const r = await client.importProject(name, from, {
          ...(opts.branch === undefined ? {} : { branch: opts.branch }),
          ...(credentials === undefined ? {} : { credentials }),
          ...(opts.submodules ? { submodules: true } : {}),
        });
        print(r, () =>
          [
            `${r.projectId}  ${name}: provisioning from ${from}${opts.branch ? ` (branch ${opts.branch})` : ""}${opts.submodules ? ", with its submodules" : ""}`,
            `rhumbatron projects show ${r.projectId} says when it is active, or why the import failed`,
          ].join("\n"),
        );
      },
    );
  projects
    .command("push-access")
    .description(
      "a new one-time token and `git push` command for a project still waiting for its push; the one before stops working (admin token)",
    )
    .argument("<id>", "the project ID")
    .action(async (id: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.pushAccess(id);
      print(r, () => formatPushAccess(id, null, r));
    });

  const change = program.command("change").description("Changes and their Work Graphs");
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
  change
    .command("context")
    .description("the Context Packet an Agent run was given: each file, why it was picked, what did not fit")
    .argument("<runId>")
    .action(async (runId: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.contextPacket(runId);
      print(r, () => formatContextPacket(r));
    });
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

  const queue = program.command("queue").description("the landing queue");
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

  queue
    .command("front")
    .description("move a waiting Change to the front of its project's landing queue: it lands first once ready (admin)")
    .argument("<changeId>")
    .action(async (changeId: string, _opts: unknown, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.setLandingPriority(changeId, "front");
      print(r, () => `${changeId} is at the front of its landing queue (priority ${r.priority}, was ${r.previous})`);
    });
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

  const task = program.command("task").description("Tasks of a Change");
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

  const candidate = program
    .command("candidate")
    .description("one Candidate: show, approve, reject, rerun a check, promote");
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
  candidate
    .command("checks")
    .description("where the Candidate's checks come from; for detected checks, the checks file to commit")
    .argument("<candidateId>")
    .action(async (id: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.candidateChecks(id);
      print(r, () => formatCandidateChecks(r));
    });
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

  program
    .command("sandbox")
    .description("the tenant's Sandbox meter")
    .command("budget")
    .description(
      "this month's Sandbox seconds: used, reserved, the budget and what used it; --set changes the tenant's budget (admin role)",
    )
    .option(
      "--set <seconds>",
      "set the tenant's monthly budget in seconds (from the next run on, this month too)",
      positiveInt,
    )
    .action(async (opts: { set?: number }, cmd: Command) => {
      const { client, print } = setup(cmd);
      if (opts.set === undefined) {
        const m = await client.sandboxMeter();
        print(m, () => formatSandboxMeter(m));
        return;
      }
      const r = await client.setSandboxBudget(opts.set);
      print(r, () => formatSandboxBudget(r));
    });

  const policy = program
    .command("policy")
    .description("a project's verification policy: required checks per risk tier, human gate, commands, timeouts");
  policy
    .command("show")
    .description("the active version and its document (--json: the file `policy set` takes)")
    .argument("<projectId>")
    .action(async (projectId: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const p = await client.getPolicy(projectId);
      print(p, () => formatPolicy(p));
    });
  policy
    .command("set")
    .description(
      "make a policy file the project's policy, as a new version (admin role); checked locally before it is sent",
    )
    .argument("<projectId>")
    .requiredOption(
      "--file <path>",
      "the policy as JSON: a document, or `policy show --json` output (then its version must still be the active one)",
    )
    .option("--expected-version <n>", "refuse (exit 2) unless this is still the active version", positiveInt)
    .action(async (projectId: string, opts: { file: string; expectedVersion?: number }, cmd: Command) => {
      const { client, print } = setup(cmd);
      const file = parsePolicyJson(await readText(opts.file), opts.file);
      const expectedVersion = opts.expectedVersion ?? file.expectedVersion;
      const r = await client.setPolicy(
        projectId,
        file.document,
        expectedVersion === undefined ? {} : { expectedVersion },
      );
      print(r, () => formatPolicyUpdate(r));
    });
  policy
    .command("history")
    .description("every version of the project's policy, newest first: who set it, when, what changed")
    .argument("<projectId>")
    .option("--limit <n>", "at most this many (1-200)", positiveInt, 50)
    .action(async (projectId: string, opts: { limit: number }, cmd: Command) => {
      const { client, print } = setup(cmd);
      const list = await client.policyHistory(projectId, { limit: opts.limit });
      print(list, () => formatPolicyHistory(list));
    });

  const secrets = program
    .command("secrets")
    .description("the tenant's secrets, API keys its Agent runs get as environment variables (admin token)");
  secrets
    .command("list")
    .description("each secret's name, when and by whom it was set; values are never shown")
    .action(async (_opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const list = await client.listSecrets();
      print(list, () => formatSecrets(list));
    });
  secrets
    .command("set")
    .description(
      "set a secret, or replace its value: the value comes from standard input (--value-stdin) or from an environment variable of yours (--from-env VAR), never as a flag, and is never shown again",
    )
    .argument("<name>", "an environment variable's name: A-Z first, then A-Z, 0-9 or _")
    .option("--value-stdin", "read the value from standard input (one trailing newline is dropped)")
    .option("--from-env <var>", "take the value from this environment variable of the CLI's")
    .action(async (name: string, opts: { valueStdin?: boolean; fromEnv?: string }, cmd: Command) => {
      if (Boolean(opts.valueStdin) === (opts.fromEnv !== undefined)) {
        throw new RhumbatronError(
          "BAD_REQUEST",
          "give the value with exactly one of --value-stdin (piped) or --from-env VAR; never as a flag",
        );
      }
      const value = opts.valueStdin
        ? (await (io.readStdin ?? readProcessStdin)()).replace(/\r?\n$/, "")
        : io.env[opts.fromEnv ?? ""];
      if (!value) {
        throw new RhumbatronError(
          "BAD_REQUEST",
          opts.valueStdin ? "standard input was empty: pipe the value in" : `${opts.fromEnv} is not set or is empty`,
        );
      }
      const { client, print } = setup(cmd);
      const r = await client.setSecret(name, value);
      print(r, () => `${r.created ? "set" : "replaced"} ${r.name}; runs started from now on get it as $${r.name}`);
    });
  secrets
    .command("delete")
    .description("delete a secret: runs started from now on no longer get it")
    .argument("<name>")
    .action(async (name: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.deleteSecret(name);
      print(r, () => `deleted ${r.name}`);
    });

  program
    .command("inbox")
    .description(
      "your notifications in the tenant, newest first: approvals waiting for you, your Changes' outcomes, dead letters",
    )
    .option("--unread", "only what is unread")
    .option("--limit <n>", "at most this many (1-200)", positiveInt, 50)
    .option("--read", "then mark every notification read")
    .action(async (opts: { unread?: boolean; limit: number; read?: boolean }, cmd: Command) => {
      const { client, print } = setup(cmd);
      const notifications = await client.inbox({ unreadOnly: opts.unread === true, limit: opts.limit });
      const unread = await client.unreadCount();
      const marked = opts.read ? await client.markAllRead() : undefined;
      print({ unread, notifications, ...(marked ? { marked } : {}) }, () => formatInbox(notifications, unread, marked));
    });

  forEachCommand(program, (cmd) => cmd !== program && cmd.addHelpText("after", SHORT_FOOTER));
  return program;
}

function forEachCommand(cmd: Command, fn: (c: Command) => void): void {
  fn(cmd);
  for (const sub of cmd.commands) forEachCommand(sub, fn);
}

/** Commander's way to take an option several times. */
function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `--file path` (read from `from`/path) or `--file repoPath=localFile`, as a file of the fix. */
async function fileToPublish(given: string, from: string): Promise<{ path: string; content: string }> {
  const eq = given.indexOf("=");
  const path = eq === -1 ? given : given.slice(0, eq);
  const local = eq === -1 ? join(from, given) : given.slice(eq + 1);
  return { path, content: await readText(local) };
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new RhumbatronError("BAD_REQUEST", `cannot read ${path} (${code}); check the --file path`);
  }
}

/** The push instruction, shown once: the token is not kept anywhere it could be shown again. */
function formatPushAccess(
  projectId: string,
  name: string | null,
  r: { url: string; command: string; expiresAt: Date | string },
): string {
  return [
    `${projectId}${name ? `  ${name}` : ""}: waiting for a push to ${r.url}`,
    `In your repository, push the branch to become main (the token works once, until ${new Date(r.expiresAt).toISOString()}):`,
    `  ${r.command}`,
    `This token is not shown again; rhumbatron projects push-access ${projectId} issues a new one while the project waits.`,
    `rhumbatron projects show ${projectId} says when it is active, or why the push failed`,
  ].join("\n");
}
