import { Command, CommanderError, Option } from "commander";
import { addAccountCommands } from "./cli/account.ts";
import { addCandidatesCommands } from "./cli/candidates.ts";
import { addChangesCommands } from "./cli/changes.ts";
import { addProjectsCommands } from "./cli/projects.ts";
import {
  type CliIo,
  commandSetup,
  EXIT,
  EXIT_FOR,
  Exit,
  forEachCommand,
  type GlobalOptions,
  HELP_FOOTER,
  processIo,
  SHORT_FOOTER,
} from "./cli/shared.ts";
import { addTestsCommands } from "./cli/tests.ts";
import { RhumbatronError } from "./errors.ts";

export { type CliIo, DEFAULT_URL, EXIT } from "./cli/shared.ts";

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

  const cli = { setup: commandSetup(io), io };
  addAccountCommands(program, cli);
  addProjectsCommands(program, cli);
  addChangesCommands(program, cli);
  addCandidatesCommands(program, cli);
  addTestsCommands(program, cli);
  forEachCommand(program, (cmd) => cmd !== program && cmd.addHelpText("after", SHORT_FOOTER));
  return program;
}
