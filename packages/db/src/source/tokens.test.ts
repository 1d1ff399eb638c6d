import { loadConfig } from "@rhumbatron/core";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../testing/index.ts";
import { checkRepoToken, issueRepoToken, revokeRepoToken, withRepoToken, withRepoTokens } from "./tokens.ts";

const t = useTestDatabase();
const config = loadConfig("dev");
const repo = "proj_0f8fad5b-d9cb-469f-a165-70867728950e";
const other = "proj_1f8fad5b-d9cb-469f-a165-70867728950e";
const t0 = new Date("2026-10-01T00:00:00Z");
const at = (s: number) => new Date(t0.getTime() + s * 1000);

describe("repository tokens", () => {
  it("accept a live token for its repository and mode only", async () => {
    const read = await issueRepoToken(t.db, { repo, mode: "read", purpose: "test" }, config, t0);
    const write = await issueRepoToken(t.db, { repo, mode: "write", purpose: "test" }, config, t0);
    await checkRepoToken(t.db, read.token, repo, "read", at(1));
    await checkRepoToken(t.db, write.token, repo, "write", at(1));
    await checkRepoToken(t.db, write.token, repo, "read", at(1));
    await expect(checkRepoToken(t.db, read.token, repo, "write", at(1))).rejects.toThrow(/read-only/);
    await expect(checkRepoToken(t.db, read.token, other, "read", at(1))).rejects.toThrow(/not proj_1f8f/);
    await expect(checkRepoToken(t.db, "rt_nope", repo, "read", at(1))).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(checkRepoToken(t.db, null, repo, "read", at(1))).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect((await t.db.repoToken.findFirstOrThrow({ where: { id: read.id } })).tokenHash).not.toContain(read.token);
  });

  it("expire after 600 s and stop working once revoked", async () => {
    const tok = await issueRepoToken(t.db, { repo, mode: "read", purpose: "test" }, config, t0);
    await checkRepoToken(t.db, tok.token, repo, "read", at(599));
    await expect(checkRepoToken(t.db, tok.token, repo, "read", at(600))).rejects.toThrow(/expired/);
    const tok2 = await issueRepoToken(t.db, { repo, mode: "read", purpose: "test" }, config, t0);
    await revokeRepoToken(t.db, tok2.token, at(1));
    await expect(checkRepoToken(t.db, tok2.token, repo, "read", at(2))).rejects.toThrow(/revoked/);
  });

  it("withRepoToken revokes even when the work fails", async () => {
    let seen = "";
    await expect(
      withRepoToken(
        t.db,
        { repo, mode: "write", purpose: "push" },
        config,
        () => t0,
        async (token) => {
          seen = token;
          throw new Error("push failed");
        },
      ),
    ).rejects.toThrow("push failed");
    await expect(checkRepoToken(t.db, seen, repo, "write", at(1))).rejects.toThrow(/revoked/);
  });

  it("withRepoTokens issues each token scoped as asked, and revokes them all even when the work fails", async () => {
    let seen: string[] = [];
    await expect(
      withRepoTokens(
        t.db,
        [
          { repo, mode: "read", purpose: "fork" },
          { repo: other, mode: "write", purpose: "push" },
        ],
        config,
        () => t0,
        async (tokens) => {
          seen = tokens;
          const [read, write] = tokens;
          await checkRepoToken(t.db, read, repo, "read", at(1));
          await expect(checkRepoToken(t.db, read, repo, "write", at(1))).rejects.toThrow(/read-only/);
          await checkRepoToken(t.db, write, other, "write", at(1));
          await expect(checkRepoToken(t.db, write, repo, "read", at(1))).rejects.toThrow(/not proj_0f8f/);
          throw new Error("push failed");
        },
      ),
    ).rejects.toThrow("push failed");
    expect(seen).toHaveLength(2);
    for (const token of seen) await expect(checkRepoToken(t.db, token, repo, "read", at(2))).rejects.toThrow(/revoked/);
    await expect(
      withRepoTokens(
        t.db,
        [{ repo: "../x", mode: "read", purpose: "x" }],
        config,
        () => t0,
        async () => 1,
      ),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });

  it("refuses to issue a token for a name the system never builds", async () => {
    await expect(
      issueRepoToken(t.db, { repo: "../../etc", mode: "read", purpose: "x" }, config, t0),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });
});
