import { type ContextItem, type FileIndex, sourceKeys } from "@rhumbatron/core";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createScriptedChange, provisionedProject, runTaskDirectly, type TestWorld, testWorld } from "../test-world.ts";
import { type FakeModel, finishReply, startFakeModel, toolReply } from "./fake-model.ts";
import { openAiAgentProvider } from "./openai-provider.ts";

/**
 * An Agent run's Context Packet, end to end: real Postgres, real git, the real runner and
 * OpenAI-compatible provider, and a local chat-completions server standing in for the model.
 */
const t = useTestDatabase();
let model: FakeModel;
beforeAll(async () => {
  model = await startFakeModel();
});
afterAll(() => model.close());
beforeEach(() => model.reset());

async function baseIndex(w: TestWorld, projectId: string) {
  const s0 = await t.db.canonicalGeneration.findUniqueOrThrow({
    where: { projectId_generation: { projectId, generation: 0 } },
  });
  const key = sourceKeys.index(projectId, s0.tree);
  const read = async () => JSON.parse(new TextDecoder().decode((await w.blobs.get(key))?.body)) as FileIndex;
  const write = (index: FileIndex) => w.blobs.put(key, new TextEncoder().encode(JSON.stringify(index)));
  return { key, tree: s0.tree, read, write };
}

/**
 * A one-Task Change run by the model Agent, which lists the files once and finishes. Task `wishlist`
 * (its title is its key) declares src/wishlist.ts. Returns the run's recorded packet, the system
 * prompt the model received and what list_files answered.
 */
async function runModelTask(w: TestWorld, projectId: string, requestId: string) {
  const changeId = await createScriptedChange(w, projectId, {
    requestId,
    title: `Change ${requestId}`,
    tasks: [{ key: "wishlist", paths: ["src/wishlist.ts"], editPlan: [] }],
  });
  const task = await t.db.task.findFirstOrThrow({ where: { changeId } });
  model.reset();
  model.script = [toolReply([["call_1", "list_files", {}]]), finishReply("call_2", "looked around")];
  const provider = openAiAgentProvider({
    baseUrl: model.baseUrl,
    model: "coder-test",
    maxSteps: 5,
    maxTokens: 100_000,
    timeoutMs: 10_000,
  });
  const { runId, result } = await runTaskDirectly(w, task, { provider });
  expect(result).toMatchObject({ outcome: "completed", detail: "looked around" });
  const packet = await t.db.contextPacket.findUniqueOrThrow({ where: { runId } });
  const system = model.recorded[0]?.body.messages[0]?.content ?? "";
  const listed = model.recorded[1]?.body.messages.find((m) => m.role === "tool")?.content ?? "";
  return { runId, packet, items: packet.items as unknown as ContextItem[], system, listed: listed.split("\n") };
}

describe("an Agent run's Context Packet", () => {
  it("is picked from the base tree's index.json, recorded, and is what the model receives, item by item", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const index = await baseIndex(w, projectId);
    const stored = await index.read();
    const { runId, packet, items, system, listed } = await runModelTask(w, projectId, "packet");

    expect(packet).toMatchObject({
      id: `ctxp_${runId.slice(4)}`,
      projectId,
      purpose: "agent_run",
      tree: index.tree,
      indexSource: "stored",
      note: null,
    });
    // Each item is a file of the index, with the index's blob ID and size.
    const byPath = new Map(stored.files.map((f) => [f.path, f]));
    expect(items[0]).toEqual({
      id: "ctx_1",
      path: "src/wishlist.ts",
      blob: byPath.get("src/wishlist.ts")?.blob,
      size: byPath.get("src/wishlist.ts")?.size,
      why: "a path the Task declares",
    });
    expect(items.map((i) => i.path)).toEqual(
      expect.arrayContaining(["test/wishlist.test.ts", "README.md", "package.json"]),
    );
    for (const item of items) {
      expect(item).toMatchObject({ blob: byPath.get(item.path)?.blob, size: byPath.get(item.path)?.size });
    }
    // The model received the recorded packet: its ID and every item's ID, path, size, blob and reason.
    expect(system).toContain(`Context Packet ${packet.id}`);
    for (const i of items) {
      expect(system).toContain(`- ${i.id} ${JSON.stringify(i.path)} (${i.size} bytes, blob ${i.blob}): ${i.why}`);
    }
    expect(system.match(/^- ctx_\d+ /gm)).toHaveLength(items.length);
    // list_files answered with the index.
    expect(listed).toEqual(stored.files.map((f) => f.path).sort());
  });

  it("reads the stored index, not the repository: a changed index.json changes the packet and list_files", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const index = await baseIndex(w, projectId);
    const stored = await index.read();
    // In the index only: a file the repository does not have; and README.md, which it has, left out.
    const phantom = { path: "src/wishlist-phantom.ts", blob: "f".repeat(40), size: 7, stored: true };
    await index.write({ ...stored, files: [...stored.files.filter((f) => f.path !== "README.md"), phantom] });

    const { items, system, listed } = await runModelTask(w, projectId, "changed-index");
    expect(items).toContainEqual({
      id: expect.stringMatching(/^ctx_\d+$/),
      path: "src/wishlist-phantom.ts",
      blob: "f".repeat(40),
      size: 7,
      why: 'its name carries "wishlist" from the Task\'s title',
    });
    expect(items.map((i) => i.path)).not.toContain("README.md");
    expect(system).toContain('"src/wishlist-phantom.ts" (7 bytes, blob ffffffff');
    expect(listed).toContain("src/wishlist-phantom.ts");
    expect(listed).not.toContain("README.md");
  });

  it("builds a missing index first, from the base commit, and records that it did and why", async () => {
    const w = await testWorld(t.db);
    const projectId = await provisionedProject(w);
    const index = await baseIndex(w, projectId);
    const original = await index.read();
    await w.blobs.delete(index.key);

    const { packet, items, listed } = await runModelTask(w, projectId, "missing-index");
    expect(packet.indexSource).toBe("built");
    expect(packet.note).toMatch(
      new RegExp(`^index.json of tree ${index.tree} was missing or unreadable; the run built it`),
    );
    expect(await index.read()).toEqual(original);
    expect(items[0]?.path).toBe("src/wishlist.ts");
    expect(listed).toEqual(original.files.map((f) => f.path).sort());
  });
});
