import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./lib/stack.ts";

/**
 * Comments point inside the repository (ARCHITECTURE.md, "Where to add"): every `docs/….md` a
 * source file names exists, and every section it names in quotes after a document
 * (`docs/landing.md, "Queue controls"`, `ARCHITECTURE.md: "Nudge on commit"`) is a heading of it.
 */
const CITED_DOC = /\b(docs\/[\w-]+\.md)\b/g;
const CITED_SECTION = /(?<![\w/.])(ARCHITECTURE\.md|README\.md|docs\/[\w-]+\.md)[,:] "([^"]+)"/g;

function sourceFiles(): string[] {
  return execFileSync("git", ["ls-files", "apps", "packages", "scripts", "e2e", "prisma"], {
    cwd: ROOT,
    encoding: "utf8",
  })
    .split("\n")
    .filter((f) => /\.(tsx?|sql|prisma|cjs|mjs)$/.test(f) && !f.includes("/generated/"));
}

/** A document's sections: its headings and its bold paragraph leads (`**Queue controls** (admins): …`). */
function headingsOf(doc: string): string[] {
  const text = readFileSync(join(ROOT, doc), "utf8");
  const headings = [...text.matchAll(/^#{1,4} (.+)$/gm)].map(([, h = ""]) => h.trim());
  const leads = [...text.matchAll(/^(?:- )?\*\*([^*]+)\*\*/gm)].map(([, h = ""]) => h.trim());
  return [...headings, ...leads];
}

/** The comments of a source file, joined into one text (a wrapped citation reads as one line). */
function commentsOf(text: string): string {
  const lines = text.split("\n").flatMap((line) => {
    const t = line.trim();
    if (/^(\/\*\*?|\*|--|\/\/)/.test(t)) return [t.replace(/^(\/\*\*?|\*\/?|--|\/\/\/?)\s?/, "")];
    const inline = line.indexOf(" // ");
    return inline >= 0 ? [line.slice(inline + 4)] : [""];
  });
  return lines.join("\n").replace(/([^\n])\n(?=[^\n])/g, "$1 ");
}

function broken(source: string, file: string): string[] {
  const text = commentsOf(source);
  const out: string[] = [];
  for (const [, doc = ""] of text.matchAll(CITED_DOC)) {
    if (!existsSync(join(ROOT, doc))) out.push(`${file}: ${doc} does not exist`);
  }
  for (const [, doc = "", section = ""] of text.matchAll(CITED_SECTION)) {
    if (!existsSync(join(ROOT, doc))) continue;
    if (!headingsOf(doc).some((h) => h === section || h.startsWith(section))) {
      out.push(`${file}: ${doc} has no section "${section}"`);
    }
  }
  return out;
}

describe("what comments cite", () => {
  it("finds a missing document and a missing section (the check can fail)", () => {
    expect(broken('// see docs/no-such-page.md and ARCHITECTURE.md, "No such section"', "x.ts")).toEqual([
      "x.ts: docs/no-such-page.md does not exist",
      'x.ts: ARCHITECTURE.md has no section "No such section"',
    ]);
    expect(broken('/**\n * see ARCHITECTURE.md, "Where\n * to add"\n */', "x.ts")).toEqual([]);
    expect(broken('const example = "docs/no-such-page.md";', "x.ts")).toEqual([]);
  });

  it("every cited document and quoted section exists", () => {
    const found = sourceFiles().flatMap((f) => broken(readFileSync(join(ROOT, f), "utf8"), f));
    expect(found).toEqual([]);
  });
});
