import { AGENT_PROGRAM_NAMES, AGENT_TIMEOUT_BOUNDS, type AgentChoice, describeAgentChoice } from "@rhumbatron/core";
import type { Command } from "commander";
import { RhumbatronError } from "../errors.ts";
import { formatProject, formatProjects } from "../format.ts";
import { formatProjectChecks } from "../format-project-checks.ts";
import { type Cli, formatPushAccess, positiveInt, readProcessStdin } from "./shared.ts";

/** `rhumbatron projects …`. */
export function addProjectsCommands(program: Command, cli: Cli): void {
  const projects = program.command("projects").description("projects of the tenant");
  projectsList(projects, cli);
  projectsShow(projects, cli);
  projectsAgent(projects, cli);
  projectsChecks(projects, cli);
  projectsCreate(projects, cli);
  projectsImport(projects, cli);
  projectsPushAccess(projects, cli);
}

function projectsList(projects: Command, cli: Cli): void {
  const { setup } = cli;
  projects
    .command("list")
    .description("list the tenant's projects")
    .action(async (_opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const list = await client.listProjects();
      print(list, () => formatProjects(list));
    });
}

function projectsShow(projects: Command, cli: Cli): void {
  const { setup } = cli;
  projects
    .command("show")
    .description("a project's status, source, and why it failed if it did")
    .argument("<id>", "the project ID")
    .action(async (id: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const project = await client.getProject(id);
      print(project, () => formatProject(project));
    });
}

function projectsAgent(projects: Command, cli: Cli): void {
  const { setup } = cli;
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
    .action(async (id: string, argv: string[], opts: AgentFlags, cmd: Command) => {
      const agent = agentChoiceOf(argv, opts);
      const { client, print } = setup(cmd);
      // The server checks the choice (an unknown program, a bad endpoint or secret name is a 400).
      const r = await client.setProjectAgent(id, agent as AgentChoice | null);
      print(r, () => `${id}: agent ${describeAgentChoice(r.agent)}${r.changed ? "" : " (unchanged)"}`);
    });
}

interface AgentFlags {
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
}

/** The choice `projects agent`'s flags make: exactly one kind, and only the flags that go with it. */
function agentChoiceOf(argv: string[], opts: AgentFlags): unknown {
  const picked = [opts.scripted, opts.model, opts.program !== undefined, opts.command, opts.default].filter(Boolean);
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
    throw new RhumbatronError("BAD_REQUEST", "--timeout and --allow-outside-paths go with --command or --program");
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
  return agent;
}

function projectsChecks(projects: Command, cli: Cli): void {
  const { setup } = cli;
  projects
    .command("checks")
    .description("where the project's checks come from at its head, what they are, and the latest setup runs")
    .argument("<id>", "the project ID")
    .action(async (id: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.projectChecks(id);
      print(r, () => formatProjectChecks(r));
    });
}

function projectsCreate(projects: Command, cli: Cli): void {
  const { setup } = cli;
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
}

function projectsImport(projects: Command, cli: Cli): void {
  const { setup, io } = cli;
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
}

function projectsPushAccess(projects: Command, cli: Cli): void {
  const { setup } = cli;
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
}
