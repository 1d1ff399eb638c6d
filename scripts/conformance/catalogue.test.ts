import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { COMMAND_TYPES, EVENT_TYPES } from "@rhumbatron/core";
import { describe, expect, it } from "vitest";
import { ROOT } from "../lib/stack.ts";

/**
 * The catalogues against the code that writes (README: Layout, "one catalogue"). Events are written
 * only by packages/db, packages/api and apps/worker (core decides, it never writes), so a declared
 * type whose name appears in none of their source files is declared and never written; a type they
 * write that the catalogue does not declare fails the type check already (EventType), and is
 * checked here as text too. Commands likewise: every declared type is sent by its ID function.
 */
const WRITERS = ["packages/db/src", "packages/api/src", "apps/worker/src"];

/** Declared by the spec and not sent by anything yet (none today). */
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

describe("the event catalogue", () => {
  it("has every declared type written somewhere", () => {
    expect(EVENT_TYPES.filter((t) => mentioned(t).length === 0)).toEqual([]);
  });

  it("declares every event type the writers name", () => {
    const written = new Set(
      writerText.flatMap((f) => [...f.text.matchAll(/eventType:\s*"([a-z_]+\.[a-z_]+)"/g)].map((m) => m[1] ?? "")),
    );
    expect([...written].filter((t) => !(EVENT_TYPES as readonly string[]).includes(t))).toEqual([]);
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
