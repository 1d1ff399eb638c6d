import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type EditStep, topologicalOrder } from "@rhumbatron/core";
import { describe, expect, it } from "vitest";
import { parseChangeJson } from "./work-graph.ts";

// examples/wishlist-change.json, the README's example: valid by the server's own schema, and its
// scripted edit plans apply cleanly to the project template as provisioned (templates/shop).
const EXAMPLE = new URL("../examples/wishlist-change.json", import.meta.url);
const TEMPLATE = fileURLToPath(new URL("../../../templates/shop/", import.meta.url));

async function example() {
  return parseChangeJson(await readFile(EXAMPLE, "utf8"), "examples/wishlist-change.json");
}

/** Replays edit plans on the template's files in memory, as the scripted agent does in its fork. */
async function apply(files: Map<string, string>, steps: EditStep[]) {
  for (const s of steps) {
    if (s.op === "write") files.set(s.path, s.content);
    else if (s.op === "delete") files.delete(s.path);
    else if (s.op === "replace") {
      const text = files.get(s.path) ?? (await readFile(join(TEMPLATE, s.path), "utf8"));
      expect(text.split(s.find).length - 1, `"${s.find}" occurs once in ${s.path}`).toBe(1);
      files.set(s.path, text.replace(s.find, s.replace));
    }
  }
}

describe("examples/wishlist-change.json", () => {
  it("is a high-risk Change whose Work Graph is page -> script and page -> link", async () => {
    const c = await example();
    expect(c.riskTier).toBe("high");
    expect(c.tasks.map((t) => [t.key, t.dependsOn])).toEqual([
      ["page", []],
      ["script", ["page"]],
      ["link", ["page"]],
    ]);
    expect(topologicalOrder(c.tasks)[0]).toBe("page");
    // Each Task declares the one file it touches, and the two branches touch different files.
    expect(c.tasks.map((t) => t.intents.paths)).toEqual([
      ["public/wishlist.html"],
      ["public/wishlist.js"],
      ["public/index.html"],
    ]);
  });

  it("applies to the template: a wishlist page with its script, linked from the shop page, every test hook kept", async () => {
    const c = await example();
    const files = new Map<string, string>();
    for (const t of c.tasks) await apply(files, t.editPlan ?? []);
    const page = files.get("public/wishlist.html") ?? "";
    expect(page).toContain('<script type="module" src="/wishlist.js"></script>');
    expect(page).toContain('data-testid="wishlist-page-items"');
    const index = files.get("public/index.html") ?? "";
    expect(index).toContain('<a href="/wishlist.html" data-testid="wishlist-page-link">');
    // The browser check's hooks on the shop page (templates/shop/README.md, "The page").
    for (const hook of ["products", "wishlist", "cart", "cart-total", "error"]) {
      expect(index).toContain(`data-testid="${hook}"`);
    }
    expect([...files.keys()].sort()).toEqual(["public/index.html", "public/wishlist.html", "public/wishlist.js"]);
  });

  it("ships a page script that parses, as the script Task's own `node --check` step requires", async () => {
    const c = await example();
    const script = c.tasks.find((t) => t.key === "script");
    expect(script?.editPlan?.at(-1)).toEqual({ op: "run", argv: ["node", "--check", "public/wishlist.js"] });
    const write = script?.editPlan?.find((s) => s.op === "write");
    const dir = await mkdtemp(join(tmpdir(), "rbt-example-"));
    await writeFile(join(dir, "package.json"), await readFile(join(TEMPLATE, "package.json")));
    await writeFile(join(dir, "wishlist.js"), write?.op === "write" ? write.content : "");
    await expect(promisify(execFile)(process.execPath, ["--check", join(dir, "wishlist.js")])).resolves.toBeDefined();
  });
});
