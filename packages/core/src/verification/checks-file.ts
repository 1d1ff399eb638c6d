import picomatch from "picomatch";
import { isMap, isSeq, LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { DEFAULT_COMMAND_ALLOWLIST } from "../sandbox/allowlist.ts";
import { RISK_TIERS } from "../work-graph/model.ts";
import { namesTestsOnce } from "./culprit.ts";

/**
 * A project's own checks, declared in its repository (docs/checks-file.md). The worker reads
 * the file from the Candidate's base commit, never from the Candidate, so a Change cannot weaken
 * the gate that judges it; a Change that edits it needs a person's approval and its checks apply
 * from the next generation (plan.ts, `editsTheGate`).
 *
 * The file says what the project needs on the host (`requires`), how to prepare a checkout
 * (`setup`), and its checks: each an id, a command (argv, no shell), a timeout, when it applies
 * (risk tiers, changed paths, a Change's invariants or goals), and what passes (exit 0; a JUnit or
 * TAP report with at least one test run; a metric below a limit). One schema for the worker, the
 * API and the CLI; a file that does not parse is refused with each problem's line and field.
 */
export const CHECKS_FILE = ".rhumbatron/checks.yml";

/** Everything under this folder is the project's gate: the checks file and what it names. */
export const GATE_FOLDER = ".rhumbatron/";

export const CHECKS_FILE_BOUNDS = {
  checks: 50,
  setup: 10,
  requires: 30,
  /** The Candidate's whole Sandbox reservation (900 s): a longer check could never finish within it. */
  timeoutSeconds: { min: 1, max: 900 },
  argvItems: 100,
  argLength: 1000,
  globs: 50,
  steps: 100,
  /** The file itself: larger is not a checks file. */
  bytes: 256 * 1024,
} as const;

/** What a check that names no timeout gets. */
export const DEFAULT_CHECK_TIMEOUT_SECONDS = 300;

const ID = /^[a-z0-9][a-z0-9._-]{0,39}$/;
export const checkIdSchema = z
  .string()
  .regex(ID, "a check id is 1 to 40 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit");

/** A bare executable name, as the Sandbox's allowlist takes (no path, no shell syntax). */
const TOOL = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;
const REQUIREMENT = /^([A-Za-z0-9][A-Za-z0-9._+-]*?)\s*(?:>=\s*(\d+(?:\.\d+){0,2}))?$/;

export interface Requirement {
  tool: string;
  /** The lowest version accepted (`node>=20` gives "20"); null: any. */
  atLeast: string | null;
  /** As written in the file. */
  text: string;
}

/** `node>=20`, `python3`, `pytest>=7.2`: a tool the host provides, and the lowest version taken. */
export function parseRequirement(text: string): Requirement | null {
  const m = REQUIREMENT.exec(text.trim());
  if (!m?.[1]) return null;
  return { tool: m[1], atLeast: m[2] ?? null, text: text.trim() };
}

/**
 * A command: a list (argv) or a string split at spaces. A string with quotes or shell syntax is
 * refused (it would mean something else without a shell): give such a command as a list.
 */
const SHELL_SYNTAX = /["'`$\\|&;<>(){}*?~]/;
const argvSchema = z
  .union([
    z.string().max(CHECKS_FILE_BOUNDS.argLength * 4),
    z.array(z.string().min(1, "an argument may not be empty").max(CHECKS_FILE_BOUNDS.argLength)),
  ])
  .transform((v, ctx) => {
    if (Array.isArray(v)) return v;
    if (SHELL_SYNTAX.test(v.replace(/\{(files|tests|pattern)\}/g, ""))) {
      ctx.addIssue({
        code: "custom",
        message:
          "commands run without a shell: quotes, $, globs, pipes and redirections mean nothing here; give the command as a list, e.g. [npm, run, -s, build], or put it in a script",
      });
      return z.NEVER;
    }
    return v.split(/\s+/).filter(Boolean);
  })
  .pipe(
    z
      .array(z.string())
      .min(1, "give a command, e.g. [npm, test]")
      .max(CHECKS_FILE_BOUNDS.argvItems, `at most ${CHECKS_FILE_BOUNDS.argvItems} arguments`)
      .refine((a) => a.length === 0 || TOOL.test(a[0] ?? ""), {
        message: "the command's first word is a bare program name (no path), found on PATH inside the Sandbox",
      }),
  );

const seconds = z
  .number()
  .int("whole seconds")
  .min(CHECKS_FILE_BOUNDS.timeoutSeconds.min)
  .max(
    CHECKS_FILE_BOUNDS.timeoutSeconds.max,
    `at most ${CHECKS_FILE_BOUNDS.timeoutSeconds.max} s, the Candidate's Sandbox reservation`,
  );

/** A path inside the checkout: relative, no `..`. */
const repoPath = z
  .string()
  .min(1)
  .max(500)
  .refine((p) => !p.startsWith("/") && !p.split("/").includes(".."), {
    message: "a path inside the repository (relative, no ..)",
  });

const glob = z.string().min(1).max(300);

/**
 * When a check applies: any one rule that holds. Within a rule every field given must hold: the
 * Change's risk tier is listed, a changed path matches a glob, an invariant of the Change names the
 * word, the Change sets the goal. An empty rule always holds; a check without `when` always applies,
 * and one with an empty `when` only when the project's policy requires it.
 */
export const ruleSchema = z.strictObject({
  tiers: z.array(z.enum(RISK_TIERS)).min(1).optional(),
  paths: z.array(glob).min(1).max(CHECKS_FILE_BOUNDS.globs).optional(),
  invariant: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9 _-]{0,60}$/, "a word or phrase an invariant names, e.g. billing")
    .optional(),
  goal: z.enum(["p95"]).optional(),
});
export type CheckRule = z.infer<typeof ruleSchema>;

/** One action of a browser check, against the project's own page: by data-testid, or a CSS selector. */
const stepSchema = z.union([
  z.strictObject({ goto: z.string().startsWith("/", "a path on the app, e.g. /") }),
  z.strictObject({ click: z.string().min(1) }),
  z.strictObject({ see: z.string().min(1) }),
  z.strictObject({ gone: z.string().min(1) }),
  z.strictObject({ screenshot: z.string().regex(/^[a-z0-9-]{1,40}$/, "a short name: letters, digits, -") }),
]);
export type BrowserStep = z.infer<typeof stepSchema>;

const reportSchema = z.strictObject({
  format: z.enum(["junit", "tap"]),
  /** The report file the command writes, relative to the checkout; absent: the command's stdout. */
  path: repoPath.optional(),
});

const checkSchema = z
  .strictObject({
    id: checkIdSchema,
    /** What the check is for, shown beside its id. */
    about: z.string().max(300).optional(),
    run: argvSchema.optional(),
    timeout: seconds.optional(),
    /** Absent: every Change. Empty: only when the policy requires it (by tier). */
    when: z.array(ruleSchema).max(20).optional(),
    /** The tree this check leaves is where every other check starts (a build). At most one. */
    prepares: z.boolean().optional(),
    /** Passing needs a test report with at least one test that ran. */
    report: reportSchema.optional(),
    /** Passing needs the last JSON object the command prints to hold `name` below `below` (default: the policy's p95 limit, tightened by a Change's goal). */
    metric: z
      .strictObject({ name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,40}$/), below: z.number().positive().optional() })
      .optional(),
    /** Only the tests related to the changed files: `{files}` is replaced by the changed paths. */
    related: argvSchema
      .refine((a) => a.filter((x) => x === "{files}").length === 1, {
        message: "name {files} once, as an argument of its own, e.g. [npx, vitest, related, --run, '{files}']",
      })
      .optional(),
    /** Only the named tests, for the culprit's probes (culprit.ts, onlyTests): `{tests}` or `{pattern}` once. */
    only: argvSchema
      .refine(
        namesTestsOnce,
        "name {tests} (an argument of its own) or {pattern} once, e.g. [npx, vitest, run, -t, '{pattern}']",
      )
      .optional(),
    /**
     * One of Rhumbatron's own procedures instead of the bare command: `contract` compares the route
     * table the command prints ({"routes": [...]}) with the base's and the Change's declared contract
     * changes; `browser` starts `run` in the Sandbox (the app, which listens on the Unix socket
     * named in LISTEN_PATH) and drives `steps` in Chromium; `playwright` runs the project's own
     * Playwright tests in `tests` with Rhumbatron's runner and Chromium against `run` (the app,
     * which listens on 127.0.0.1:$PORT), all inside the Sandbox.
     */
    procedure: z.enum(["contract", "browser", "playwright"]).optional(),
    steps: z.array(stepSchema).min(1).max(CHECKS_FILE_BOUNDS.steps).optional(),
    /** A playwright check's test folder (its *.spec.ts / *.spec.js / *.test.* files), relative to the checkout. */
    tests: repoPath.optional(),
  })
  .superRefine((c, ctx) => {
    if (!c.run) ctx.addIssue({ code: "custom", path: ["run"], message: "give the command the check runs" });
    if (c.procedure === "browser" && !c.steps)
      ctx.addIssue({ code: "custom", path: ["steps"], message: "a browser check lists the steps it drives" });
    if (c.steps && c.procedure !== "browser")
      ctx.addIssue({ code: "custom", path: ["steps"], message: "only a check with procedure: browser has steps" });
    if (c.procedure === "playwright" && !c.tests)
      ctx.addIssue({
        code: "custom",
        path: ["tests"],
        message: "a playwright check names its test folder, e.g. tests: e2e",
      });
    if (c.tests && c.procedure !== "playwright")
      ctx.addIssue({ code: "custom", path: ["tests"], message: "only a check with procedure: playwright has tests" });
    if (c.procedure === "playwright" && c.report)
      ctx.addIssue({
        code: "custom",
        path: ["report"],
        message: "a playwright check's report is Rhumbatron's own (JUnit)",
      });
    if (c.only && (!c.report || c.procedure))
      ctx.addIssue({ code: "custom", path: ["only"], message: "only a test check with a report runs named tests" });
    if (c.related && (c.procedure || c.prepares))
      ctx.addIssue({
        code: "custom",
        path: ["related"],
        message: "only a plain test check runs related tests",
      });
  });

const setupSchema = z.strictObject({
  id: checkIdSchema,
  run: argvSchema,
  timeout: seconds.optional(),
  /** What the step produces (kept and copied into later runs), relative to the checkout. */
  cache: z.array(repoPath).min(1).max(10).optional(),
  /** The files whose content keys the cache (a lockfile). */
  key: z.array(repoPath).min(1).max(10).optional(),
});

export const checksFileSchema = z
  .strictObject({
    version: z.literal(1, { error: "version: 1 (the only version there is)" }),
    requires: z
      .array(z.string().max(100))
      .max(CHECKS_FILE_BOUNDS.requires)
      .superRefine((items, ctx) => {
        for (const [i, r] of items.entries()) {
          if (!parseRequirement(r))
            ctx.addIssue({
              code: "custom",
              path: [i],
              message: "a tool and maybe its lowest version: python3, node>=20, pytest>=7",
            });
        }
      })
      .optional(),
    /** The package registries a setup step may reach (host names); nothing else is reachable. */
    registries: z.array(z.string().regex(/^[a-z0-9.-]+(:\d+)?$/, "a host name, e.g. registry.npmjs.org")).optional(),
    setup: z.array(setupSchema).max(CHECKS_FILE_BOUNDS.setup).optional(),
    /**
     * Files everyone appends to (changelogs, release notes), as globs: where two Changes add lines
     * at the same place, composition keeps both sides' lines, earlier first, instead of a conflict.
     */
    appendOnly: z.array(glob).min(1).max(CHECKS_FILE_BOUNDS.globs).optional(),
    checks: z.array(checkSchema).min(1, "declare at least one check").max(CHECKS_FILE_BOUNDS.checks),
  })
  .superRefine((f, ctx) => {
    const seen = new Set<string>();
    for (const [i, c] of f.checks.entries()) {
      if (seen.has(c.id))
        ctx.addIssue({ code: "custom", path: ["checks", i, "id"], message: `check ${c.id} is declared twice` });
      seen.add(c.id);
    }
    const preparing = f.checks.flatMap((c, i) => (c.prepares ? [i] : []));
    for (const i of preparing.slice(1))
      ctx.addIssue({ code: "custom", path: ["checks", i, "prepares"], message: "only one check prepares the tree" });
    const allowed = allowedTools(f.requires ?? []);
    const refuse = (path: (string | number)[], argv: string[] | undefined) => {
      const tool = argv?.[0];
      if (tool && !allowed.includes(tool))
        ctx.addIssue({
          code: "custom",
          path,
          message: `${tool} is neither one of the Sandbox's tools (${DEFAULT_COMMAND_ALLOWLIST.join(", ")}) nor named in requires`,
        });
    };
    for (const [i, c] of f.checks.entries()) {
      refuse(["checks", i, "run"], c.run);
      refuse(["checks", i, "related"], c.related);
      refuse(["checks", i, "only"], c.only);
    }
    for (const [i, s] of (f.setup ?? []).entries()) refuse(["setup", i, "run"], s.run);
  });
export type ChecksFile = z.infer<typeof checksFileSchema>;
export type DeclaredCheck = ChecksFile["checks"][number];
export type SetupStep = NonNullable<ChecksFile["setup"]>[number];

/** The programs a project's commands may start: the Sandbox's own, and the tools its file requires. */
export function allowedTools(requires: readonly string[]): string[] {
  const named = requires.flatMap((r) => {
    const p = parseRequirement(r);
    return p ? [p.tool] : [];
  });
  return [...new Set([...DEFAULT_COMMAND_ALLOWLIST, ...named])];
}

export interface ChecksFileProblem {
  /** 1-based; null when the problem is the file as a whole. */
  line: number | null;
  column: number | null;
  /** The field's path, e.g. `checks[2].timeout`; empty for the file. */
  field: string;
  message: string;
}

export type ChecksFileReading = { ok: true; file: ChecksFile } | { ok: false; problems: ChecksFileProblem[] };

const fieldPath = (path: readonly PropertyKey[]) =>
  path.map((k, n) => (typeof k === "number" ? `[${k}]` : `${n ? "." : ""}${String(k)}`)).join("");

/** `.rhumbatron/checks.yml:12: checks[2].timeout: at most 900 s, …`: one line per problem. */
export function describeChecksFileProblems(problems: readonly ChecksFileProblem[], file = CHECKS_FILE): string {
  return problems
    .map((p) => `${file}${p.line ? `:${p.line}` : ""}: ${p.field ? `${p.field}: ` : ""}${p.message}`)
    .join("\n");
}

/**
 * Reads the checks file's text: YAML, then the schema. Each problem names its line (and column) in
 * the file and the field, so the person fixing it goes straight there. Never throws.
 */
export function parseChecksFile(text: string): ChecksFileReading {
  if (new TextEncoder().encode(text).length > CHECKS_FILE_BOUNDS.bytes) {
    return {
      ok: false,
      problems: [{ line: null, column: null, field: "", message: `larger than ${CHECKS_FILE_BOUNDS.bytes} bytes` }],
    };
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: doc.errors.map((e) => {
        const at = lines.linePos(e.pos[0]);
        return { line: at.line, column: at.col, field: "", message: `not valid YAML: ${e.message.split("\n")[0]}` };
      }),
    };
  }
  const parsed = checksFileSchema.safeParse(doc.toJS());
  if (parsed.success) return { ok: true, file: parsed.data };
  return {
    ok: false,
    problems: parsed.error.issues.map((i) => {
      const at = positionOf(doc, lines, i.path);
      return { ...at, field: fieldPath(i.path), message: i.message };
    }),
  };
}

/** The line and column of the deepest node of `path` the document has (the key itself when the value is missing). */
function positionOf(
  doc: ReturnType<typeof parseDocument>,
  lines: LineCounter,
  path: readonly PropertyKey[],
): { line: number | null; column: number | null } {
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n) as (string | number)[], true) as
      | { range?: [number, number, number] }
      | undefined;
    const start = node && typeof node === "object" && node.range ? node.range[0] : undefined;
    if (start !== undefined) {
      const at = lines.linePos(start);
      return { line: at.line, column: at.col };
    }
    if (n === 0) break;
  }
  const root = doc.contents;
  if ((isMap(root) || isSeq(root)) && root.range) {
    const at = lines.linePos(root.range[0]);
    return { line: at.line, column: at.col };
  }
  return { line: null, column: null };
}

/** A check's `when` in words, as the project page and `rhumbatron projects checks` show it. */
export function describeCheckRules(rules: readonly CheckRule[] | undefined): string {
  if (rules === undefined) return "every Change";
  if (rules.length === 0) return "when the policy requires it";
  return rules
    .map((r) =>
      Object.entries(r)
        .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(", ") : String(v)}`)
        .join("; "),
    )
    .join(" or ");
}

/** Whether `path` is one of the file's append-only files (its `appendOnly` globs). */
export function appendOnlyMatcher(file: Pick<ChecksFile, "appendOnly"> | null): (path: string) => boolean {
  const globs = file?.appendOnly ?? [];
  if (globs.length === 0) return () => false;
  const match = picomatch(globs, { dot: true });
  return (path) => match(path);
}
