import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { COMMAND_TYPES, EVENT_TYPES } from "@rhumbatron/core";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "../lib/stack.ts";

/**
 * The catalogues against the code that writes (ARCHITECTURE.md, "Where to add"). Events are written
 * only by packages/db, packages/api and apps/worker (core decides, it never writes), so a declared
 * type that none of their event-building calls names is declared and never written; a type they
 * write that the catalogue does not declare fails the type check already (EventType), and is
 * checked here too. Commands likewise: every declared type is sent by its ID function.
 */
const WRITERS = ["packages/db/src", "packages/api/src", "apps/worker/src"];

/** Declared in a catalogue (Events or commands) and not sent by anything yet (none today). */
const NOT_YET_SENT = new Set<string>([]);

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === "generated" || name === "node_modules") continue;
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !path.includes("/testing/")) out.push(path);
  }
  return out;
}

const writerText = WRITERS.flatMap((d) => sources(join(ROOT, d))).map((f) => ({
  file: relative(ROOT, f),
  text: readFileSync(f, "utf8"),
}));
const mentioned = (name: string) => writerText.filter((f) => f.text.includes(`"${name}"`)).map((f) => f.file);

/**
 * The Event factories (packages/db/src/events/factory.ts) and where their event type goes. A name
 * in a comment, a query or a comparison writes nothing, so only these calls count, read from the
 * syntax tree.
 */
const FACTORIES: ReadonlyMap<string, number> = new Map([
  ["changeEvent", 1],
  ["projectEvent", 1],
]);

type FunctionLike = ts.FunctionDeclaration | ts.ArrowFunction | ts.FunctionExpression | ts.MethodDeclaration;

function nameOf(f: FunctionLike): ts.Identifier | undefined {
  if (f.name && ts.isIdentifier(f.name)) return f.name;
  if (ts.isVariableDeclaration(f.parent) && ts.isIdentifier(f.parent.name)) return f.parent.name;
  return undefined;
}

function isExported(f: FunctionLike): boolean {
  const decl = ts.isVariableDeclaration(f.parent) ? f.parent : f;
  return (ts.getCombinedModifierFlags(decl as ts.Declaration) & ts.ModifierFlags.Export) !== 0;
}

/** The event types an argument names: a literal, or each branch of a conditional. */
function literalsOf(e: ts.Expression): string[] {
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return [e.text];
  if (ts.isConditionalExpression(e)) return [...literalsOf(e.whenTrue), ...literalsOf(e.whenFalse)];
  if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e))
    return literalsOf(e.expression);
  return [];
}

function each(node: ts.Node, visit: (n: ts.Node) => void) {
  visit(node);
  node.forEachChild((c) => each(c, visit));
}

function isFunctionLike(n: ts.Node): n is FunctionLike {
  return (
    ts.isFunctionDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isMethodDeclaration(n)
  );
}

/** The nearest function around `node` with a parameter called `name`, and that parameter's position. */
function parameterOf(node: ts.Node, name: string): { fn: FunctionLike; at: number } | undefined {
  for (let n = node.parent; n; n = n.parent) {
    if (!isFunctionLike(n)) continue;
    const at = n.parameters.findIndex((p) => ts.isIdentifier(p.name) && p.name.text === name);
    if (at >= 0) return { fn: n, at };
  }
  return undefined;
}

/**
 * Which event types the writers build, and where. A helper that hands its own parameter to a
 * factory as the event type (candidateEvent, releaseEvent, a local `ev`) becomes a factory too, as
 * does a parameter that receives one, so a literal given to such a helper counts; an event type
 * held in a variable does not, and its type then reads as never written.
 */
function writtenEventTypes(): Map<string, string[]> {
  const shared = new Map(FACTORIES);
  const local = new Map<string, Map<string, number>>();
  const trees = new Map<string, ts.SourceFile>();
  const factoryAt = (file: string, callee: ts.Expression) =>
    ts.isIdentifier(callee) ? (local.get(file)?.get(callee.text) ?? shared.get(callee.text)) : undefined;
  let grew = true;
  while (grew) {
    grew = false;
    const add = (into: Map<string, number>, name: string, at: number) => {
      if (into.has(name)) return;
      into.set(name, at);
      grew = true;
    };
    // Only a file that names a shared factory can call one, or make a helper of its own.
    for (const { file, text } of writerText.filter((f) => [...shared.keys()].some((name) => f.text.includes(name)))) {
      const source = trees.get(file) ?? ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      trees.set(file, source);
      const mine = local.get(file) ?? new Map<string, number>();
      local.set(file, mine);
      const functions = new Map(
        source.statements.filter(ts.isFunctionDeclaration).map((f) => [f.name?.text ?? "", f] as const),
      );
      each(source, (n) => {
        if (!ts.isCallExpression(n)) return;
        const at = factoryAt(file, n.expression);
        const arg = at === undefined ? undefined : n.arguments[at];
        const owner = arg && ts.isIdentifier(arg) ? parameterOf(n, arg.text) : undefined;
        const helper = owner && nameOf(owner.fn);
        if (owner && helper) add(isExported(owner.fn) ? shared : mine, helper.text, owner.at);
        // A factory handed to a function of this file: that function's parameter is one inside it.
        const callee = ts.isIdentifier(n.expression) ? functions.get(n.expression.text) : undefined;
        n.arguments.forEach((a, i) => {
          const passed = factoryAt(file, a);
          const param = callee?.parameters[i]?.name;
          if (passed !== undefined && param && ts.isIdentifier(param)) add(mine, param.text, passed);
        });
      });
    }
  }
  const written = new Map<string, string[]>();
  for (const [file, source] of trees) {
    each(source, (n) => {
      if (!ts.isCallExpression(n)) return;
      const at = factoryAt(file, n.expression);
      const arg = at === undefined ? undefined : n.arguments[at];
      for (const t of arg ? literalsOf(arg) : []) written.set(t, [...(written.get(t) ?? []), file]);
    });
  }
  return written;
}

describe("the event catalogue", () => {
  const written = writtenEventTypes();

  it("has every declared type written somewhere", () => {
    expect(EVENT_TYPES.filter((t) => !written.has(t))).toEqual([]);
  });

  it("declares every event type the writers build", () => {
    const undeclared = [...written].filter(([t]) => !(EVENT_TYPES as readonly string[]).includes(t));
    expect(Object.fromEntries(undeclared)).toEqual({});
  });
});

describe("the command catalogue", () => {
  it("has every declared type sent somewhere, except the ones still owed", () => {
    const unsent = COMMAND_TYPES.filter((t) => mentioned(t).length === 0);
    expect(unsent.sort()).toEqual([...NOT_YET_SENT].sort());
  });

  it("formats command IDs only through commandIds", () => {
    const inline = writerText.filter((f) => /commandId:\s*`cmd_/.test(f.text)).map((f) => f.file);
    expect(inline).toEqual([]);
  });
});
