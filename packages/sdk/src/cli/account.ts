import type { Command } from "commander";
import { RhumbatronError } from "../errors.ts";
import {
  formatPolicy,
  formatPolicyHistory,
  formatPolicyUpdate,
  formatSandboxBudget,
  formatSandboxMeter,
  formatWhoami,
} from "../format.ts";
import { formatInbox } from "../inbox.ts";
import { parsePolicyJson } from "../policy.ts";
import { formatSecrets } from "../secrets.ts";
import { type Cli, positiveInt, readProcessStdin, readText } from "./shared.ts";

/** whoami, the Sandbox budget, policy, secrets and the inbox. */
export function addAccountCommands(program: Command, cli: Cli): void {
  whoami(program, cli);
  sandboxBudget(program, cli);
  const policy = program
    .command("policy")
    .description("a project's verification policy: required checks per risk tier, human gate, commands, timeouts");
  policyShow(policy, cli);
  policySet(policy, cli);
  policyHistory(policy, cli);
  const secrets = program
    .command("secrets")
    .description("the tenant's secrets, API keys its Agent runs get as environment variables (admin token)");
  secretsList(secrets, cli);
  secretsSet(secrets, cli);
  secretsDelete(secrets, cli);
  inbox(program, cli);
}

function whoami(program: Command, cli: Cli): void {
  const { setup } = cli;
  program
    .command("whoami")
    .description("the tenant and role the token acts as")
    .action(async (_opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const w = await client.whoami();
      print(w, () => formatWhoami(w));
    });
}

function sandboxBudget(program: Command, cli: Cli): void {
  const { setup } = cli;
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
}

function policyShow(policy: Command, cli: Cli): void {
  const { setup } = cli;
  policy
    .command("show")
    .description("the active version and its document (--json: the file `policy set` takes)")
    .argument("<projectId>")
    .action(async (projectId: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const p = await client.getPolicy(projectId);
      print(p, () => formatPolicy(p));
    });
}

function policySet(policy: Command, cli: Cli): void {
  const { setup } = cli;
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
}

function policyHistory(policy: Command, cli: Cli): void {
  const { setup } = cli;
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
}

function secretsList(secrets: Command, cli: Cli): void {
  const { setup } = cli;
  secrets
    .command("list")
    .description("each secret's name, when and by whom it was set; values are never shown")
    .action(async (_opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const list = await client.listSecrets();
      print(list, () => formatSecrets(list));
    });
}

function secretsSet(secrets: Command, cli: Cli): void {
  const { setup, io } = cli;
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
}

function secretsDelete(secrets: Command, cli: Cli): void {
  const { setup } = cli;
  secrets
    .command("delete")
    .description("delete a secret: runs started from now on no longer get it")
    .argument("<name>")
    .action(async (name: string, _opts, cmd: Command) => {
      const { client, print } = setup(cmd);
      const r = await client.deleteSecret(name);
      print(r, () => `deleted ${r.name}`);
    });
}

function inbox(program: Command, cli: Cli): void {
  const { setup } = cli;
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
}
