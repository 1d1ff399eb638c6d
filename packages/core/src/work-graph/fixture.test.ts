import { describe, expect, it } from "vitest";
import { commandIds } from "../commands/catalogue.ts";
import { PATCH_MAX_BYTES } from "../config.ts";
import { workspaceFork } from "../source/names.ts";
import { fixtureContentHash, fixtureInput, fixtureRecordIds, fixtureRefusal } from "./fixture.ts";

const ok = { summary: "Fix the cart total", files: [{ path: "src/cart.js", content: "export const total = 1;\n" }] };

describe("fixtureInput", () => {
  it("takes whole files and deletions under the repository root", () => {
    expect(
      fixtureInput.safeParse({ ...ok, files: [...ok.files, { path: "old/readme.md", delete: true }] }).success,
    ).toBe(true);
  });

  it("refuses paths outside the work tree, into .git, twice, a file ending in '/', and more than 512 KB", () => {
    const refused = (files: unknown[]) => fixtureInput.safeParse({ ...ok, files }).success;
    for (const path of ["../etc/passwd", "/abs", ".git/hooks/pre-commit", "a\\b", "src/", "a//b", ""])
      expect(refused([{ path, content: "x" }]), path).toBe(false);
    expect(refused([])).toBe(false);
    expect(
      refused([
        { path: "a", content: "x" },
        { path: "a", delete: true },
      ]),
    ).toBe(false);
    expect(refused([{ path: "a", content: "x", delete: true }])).toBe(false);
    const half = "x".repeat(PATCH_MAX_BYTES / 2);
    expect(refused([{ path: "a", content: half }])).toBe(true);
    expect(
      refused([
        { path: "a", content: half },
        { path: "b", content: `${half}y` },
      ]),
    ).toBe(false);
    expect(fixtureInput.safeParse({ ...ok, summary: "  " }).success).toBe(false);
  });
});

describe("fixture identity", () => {
  it("is the same for the same files in any order and different for other content", () => {
    const a = {
      summary: "s",
      files: [
        { path: "a", content: "1" },
        { path: "b", delete: true as const },
      ],
    };
    const b = {
      summary: "s",
      files: [
        { path: "b", delete: true as const },
        { path: "a", content: "1" },
      ],
    };
    expect(fixtureContentHash(a)).toBe(fixtureContentHash(b));
    expect(fixtureContentHash(a)).not.toBe(fixtureContentHash({ ...a, summary: "t" }));
    expect(fixtureContentHash(a)).not.toBe(
      fixtureContentHash({
        summary: "s",
        files: [
          { path: "a", content: "2" },
          { path: "b", delete: true as const },
        ],
      }),
    );
  });

  it("derives one run (with a workspace fork name) and one ChangeSet per command", () => {
    const id = commandIds.fixturePublish("task_1", 2, "ab".repeat(32));
    expect(id).toMatch(/^cmd_fixture_task_1_a2_[0-9a-f]{32}$/);
    const r = fixtureRecordIds(id);
    expect(r).toEqual(fixtureRecordIds(id));
    expect(workspaceFork(r.runId)).toMatch(/^ws-/);
    expect(r.changeSetId.slice(3)).toBe(r.runId.slice(4));
    expect(fixtureRecordIds(`${id}x`).runId).not.toBe(r.runId);
  });
});

describe("fixtureRefusal", () => {
  const task = (state: string, blockedLimit: string | null = null) => ({ key: "t", state, blockedLimit, attempt: 1 });
  const open = { status: "open" };

  it("lets a ready, failed or blocked Task take a fixture", () => {
    expect(fixtureRefusal(task("ready"), open)).toBeNull();
    expect(fixtureRefusal(task("failed"), open)).toBeNull();
    expect(fixtureRefusal(task("blocked", "sandbox_meter"), open)).toBeNull();
  });

  it("refuses a pending, running, completed or cancelled Task, a final Change and another attempt", () => {
    expect(fixtureRefusal(task("pending"), open)).toMatch(/waits for the Tasks it depends on/);
    expect(fixtureRefusal(task("running"), open)).toMatch(/an Agent is working/);
    expect(fixtureRefusal(task("completed"), open)).toMatch(/has its ChangeSet/);
    expect(fixtureRefusal(task("blocked", "cancelled"), open)).toMatch(/cancelled/);
    expect(fixtureRefusal(task("ready"), { status: "promoted" })).toMatch(/promoted/);
    expect(fixtureRefusal(task("ready"), { status: "cancelled" })).toMatch(/cancelled/);
    expect(fixtureRefusal(task("ready"), open, 2)).toMatch(/retried/);
  });
});
