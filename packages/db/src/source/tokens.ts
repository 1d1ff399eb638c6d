import { createHash, randomBytes, randomUUID } from "node:crypto";
import { DomainError, isRepoName, type RepoMode, type RhumbatronConfig } from "@rhumbatron/core";
import type { Db } from "../client.ts";

/**
 * Repository tokens: every git access uses a short-lived repo token
 * (config.source.repoTokenTtlSeconds, 600 s), revoked after use. A token names one repository and
 * one mode; only its SHA-256 is stored. Every access checks it: an unknown, expired, revoked or
 * wrongly scoped token is refused with FORBIDDEN.
 */
export interface IssuedToken {
  id: string;
  token: string;
  repo: string;
  mode: RepoMode;
  expiresAt: Date;
}

const hash = (token: string) => createHash("sha256").update(token).digest("hex");

export async function issueRepoToken(
  db: Db,
  t: { repo: string; mode: RepoMode; purpose: string },
  config: RhumbatronConfig,
  now: Date,
): Promise<IssuedToken> {
  if (!isRepoName(t.repo)) throw new DomainError("INVALID_INPUT", `not a repository name: ${t.repo}`);
  const token = `rt_${randomBytes(24).toString("base64url")}`;
  const id = `tok_${randomUUID()}`;
  const expiresAt = new Date(now.getTime() + config.source.repoTokenTtlSeconds * 1000);
  await db.repoToken.create({
    data: { id, tokenHash: hash(token), repo: t.repo, mode: t.mode, purpose: t.purpose, expiresAt },
  });
  return { id, token, repo: t.repo, mode: t.mode, expiresAt };
}

/** Refuses unless the token is live and scoped to this repository; a write token may also read. */
export async function checkRepoToken(
  db: Db,
  token: string | null | undefined,
  repo: string,
  mode: RepoMode,
  now: Date,
): Promise<void> {
  if (!token) throw new DomainError("FORBIDDEN", `a ${mode} token for ${repo} is required`);
  const row = await db.repoToken.findUnique({ where: { tokenHash: hash(token) } });
  if (!row) throw new DomainError("FORBIDDEN", "unknown repository token");
  if (row.revokedAt) throw new DomainError("FORBIDDEN", "the repository token was revoked");
  if (row.expiresAt.getTime() <= now.getTime()) throw new DomainError("FORBIDDEN", "the repository token has expired");
  if (row.repo !== repo) throw new DomainError("FORBIDDEN", `the token is for ${row.repo}, not ${repo}`);
  if (mode === "write" && row.mode !== "write")
    throw new DomainError("FORBIDDEN", `the token is read-only for ${repo}`);
}

export async function revokeRepoToken(db: Db, token: string, now: Date): Promise<void> {
  await db.repoToken.updateMany({ where: { tokenHash: hash(token), revokedAt: null }, data: { revokedAt: now } });
}

/** Runs `fn` with a fresh token and revokes it afterwards, whatever happens. */
export async function withRepoToken<T>(
  db: Db,
  t: { repo: string; mode: RepoMode; purpose: string },
  config: RhumbatronConfig,
  now: () => Date,
  fn: (token: string) => Promise<T>,
): Promise<T> {
  const issued = await issueRepoToken(db, t, config, now());
  try {
    return await fn(issued.token);
  } finally {
    await revokeRepoToken(db, issued.token, now());
  }
}

/**
 * Several tokens for one piece of work (say, read canonical and write the fork), issued in one
 * statement and revoked in one, whatever happens: a step's token bookkeeping is two writes, not two
 * per repository. `fn` gets the tokens in the order asked for.
 */
export async function withRepoTokens<T>(
  db: Db,
  wanted: { repo: string; mode: RepoMode; purpose: string }[],
  config: RhumbatronConfig,
  now: () => Date,
  fn: (tokens: string[]) => Promise<T>,
): Promise<T> {
  for (const t of wanted)
    if (!isRepoName(t.repo)) throw new DomainError("INVALID_INPUT", `not a repository name: ${t.repo}`);
  const expiresAt = new Date(now().getTime() + config.source.repoTokenTtlSeconds * 1000);
  const tokens = wanted.map(() => `rt_${randomBytes(24).toString("base64url")}`);
  await db.repoToken.createMany({
    data: wanted.map((t, i) => ({
      id: `tok_${randomUUID()}`,
      tokenHash: hash(tokens[i] ?? ""),
      repo: t.repo,
      mode: t.mode,
      purpose: t.purpose,
      expiresAt,
    })),
  });
  try {
    return await fn(tokens);
  } finally {
    await db.repoToken.updateMany({
      where: { tokenHash: { in: tokens.map(hash) }, revokedAt: null },
      data: { revokedAt: now() },
    });
  }
}
