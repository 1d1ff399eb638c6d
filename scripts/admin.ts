/**
 * `npm run admin -- …`: what an operator does from the command line, against DATABASE_URL (or the
 * embedded Postgres of `npm start`). docs/sign-in.md, Operators.
 *
 *   tenant add --slug <slug> --name <name>
 *   user add --tenant <slug> --email <email> --name <name> --role <role> --password-stdin
 *   backup --to <folder>        the database, repositories and blobs (docs/production.md, "Backup and restore")
 *   restore --from <folder>     into a fresh installation: its database migrated and holding no project
 *
 * The password is read from standard input (one line), never from the command line, where the
 * shell history and the process list would keep it. `--json` prints the result as one JSON value.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { configFromSettings, DomainError, parseSettings, repoNamespace } from "@rhumbatron/core";
import {
  blobStoreFromSettings,
  createDb,
  createTenant,
  type Db,
  migrate,
  provisionMember,
  type Role,
} from "@rhumbatron/db";
import { restoreBackup, takeBackup } from "./lib/backup.ts";
import { checkReachable, type DatabaseHandle, openDatabase } from "./lib/database.ts";
import { loadEnvFile } from "./lib/env-file.ts";
import { exitWith } from "./lib/fail.ts";
import { isPortFree } from "./lib/ports.ts";
import { ROOT } from "./lib/stack.ts";

const USAGE = `usage:
  npm run admin -- tenant add --slug <slug> --name <name> [--json]
  npm run admin -- user add --tenant <slug> --email <email> --name <name> --role <role> --password-stdin [--json]
  npm run admin -- backup --to <folder> [--json]
  npm run admin -- restore --from <folder> [--json]
roles: viewer, member, approver, operator, admin`;

const usage = (why: string) => new DomainError("INVALID_INPUT", `${why}\n${USAGE}`);

type Flags = Partial<Record<"slug" | "name" | "tenant" | "email" | "role" | "to" | "from", string>> & {
  "password-stdin"?: boolean;
  json?: boolean;
  help?: boolean;
};

function parse(argv: string[]): { command: string; flags: Flags } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      slug: { type: "string" },
      name: { type: "string" },
      tenant: { type: "string" },
      email: { type: "string" },
      role: { type: "string" },
      to: { type: "string" },
      from: { type: "string" },
      "password-stdin": { type: "boolean" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  return { command: positionals.join(" "), flags: values };
}

function required(flags: Flags, ...names: ("slug" | "name" | "tenant" | "email" | "role" | "to" | "from")[]): string[] {
  const missing = names.filter((n) => !flags[n]);
  if (missing.length > 0) throw usage(`missing ${missing.map((n) => `--${n}`).join(", ")}`);
  return names.map((n) => flags[n] ?? "");
}

/** The first line of standard input, without its line ending. */
async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) {
    throw usage("--password-stdin reads the password from a pipe, e.g. printf '%s\\n' \"$PASSWORD\" | npm run admin …");
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").split(/\r?\n/)[0] ?? "";
}

/**
 * DATABASE_URL when set; otherwise the embedded Postgres: the one `npm start` is running (its
 * port is taken), or started for this command with the data in RHUMBATRON_DATA_DIR.
 */
async function database(): Promise<DatabaseHandle> {
  const settings = parseSettings(process.env);
  const port = settings.RHUMBATRON_EMBEDDED_PG_PORT;
  if (!settings.DATABASE_URL && !(await isPortFree(port, "127.0.0.1"))) {
    // The embedded server's fixed local user (packages/db embedded.ts) and the database npm start uses.
    const url = `postgresql://rhumbatron:rhumbatron@127.0.0.1:${port}/rhumbatron`;
    await checkReachable(url);
    return { url, embedded: true, stop: async () => {} };
  }
  return openDatabase({
    databaseUrl: settings.DATABASE_URL,
    dataDir: settings.RHUMBATRON_DATA_DIR,
    embeddedPort: port,
  });
}

type Action = (db: Db, url: string) => Promise<{ line: string; json: unknown }>;

/** What the command will do, once its flags (and the password) are read: nothing is opened before. */
async function actionFor(command: string, flags: Flags): Promise<Action> {
  if (command === "tenant add") {
    const [slug = "", name = ""] = required(flags, "slug", "name");
    return async (db) => {
      const t = await createTenant(db, { slug, name });
      const line = t.created
        ? `tenant ${t.slug} (${t.tenantId}) created`
        : `tenant ${t.slug} (${t.tenantId}, "${t.name}") exists already; nothing written`;
      return { line, json: t };
    };
  }
  if (command === "user add") {
    const [tenantSlug = "", email = "", name = "", role = ""] = required(flags, "tenant", "email", "name", "role");
    if (!flags["password-stdin"]) throw usage("give the password on standard input with --password-stdin");
    const password = await readPassword();
    return async (db) => {
      const m = await provisionMember(db, { tenantSlug, email, name, role: role as Role, password });
      const what = [
        m.createdUser ? "user created" : "existing user",
        m.roleChanged ? `role ${m.role}` : `role ${m.role} unchanged`,
        m.passwordChanged ? "password set" : "password unchanged",
        ...(m.endedSessions > 0 ? [`${m.endedSessions} sessions ended`] : []),
      ];
      return { line: `${m.email} (${m.userId}) in ${tenantSlug}: ${what.join(", ")}`, json: m };
    };
  }
  if (command === "backup" || command === "restore") return backupAction(command, flags);
  throw usage(command ? `unknown command "${command}"` : "no command given");
}

/** The installation's blobs and repositories, from the same settings the worker reads. */
function installation(db: Db) {
  const settings = parseSettings(process.env);
  const config = configFromSettings(settings);
  const gitRoot = resolve(ROOT, settings.RHUMBATRON_DATA_DIR, "git", repoNamespace(config.env));
  return { db, blobs: blobStoreFromSettings(settings), gitRoot };
}

function backupAction(command: "backup" | "restore", flags: Flags): Action {
  if (command === "backup") {
    const [to = ""] = required(flags, "to");
    return async (db) => {
      const m = await takeBackup(installation(db), resolve(to));
      const rows = Object.values(m.tables).reduce((a, b) => a + b, 0);
      return {
        line: `backup in ${resolve(to)}: ${rows} rows of ${Object.keys(m.tables).length} tables, ${m.blobs} blobs`,
        json: m,
      };
    };
  }
  const [from = ""] = required(flags, "from");
  return async (db, url) => {
    // A fresh installation's database gets its schema first (what npm start would apply).
    await migrate(url);
    const r = await restoreBackup(resolve(from), installation(db));
    const problems = r.mains.filter((m) => m.problem).map((m) => m.problem);
    const line = [
      `restored ${Object.values(r.tables).reduce((a, b) => a + b, 0)} rows and ${r.blobs} blobs`,
      `${r.mains.filter((m) => m.moved).length} of ${r.mains.length} mains moved back to their last generation`,
      ...problems,
    ].join("; ");
    return { line, json: r };
  };
}

async function main() {
  loadEnvFile(ROOT);
  const { command, flags } = parse(process.argv.slice(2));
  if (flags.help) {
    console.log(USAGE);
    return;
  }
  const act = await actionFor(command, flags);
  const handle = await database();
  const db = createDb(handle.url, { maxConnections: 2 });
  try {
    const out = await act(db, handle.url);
    console.log(flags.json ? JSON.stringify(out.json) : out.line);
  } finally {
    await db.$disconnect();
    await handle.stop();
  }
}

main().then(() => process.exit(0), exitWith);
