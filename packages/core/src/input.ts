import { z } from "zod";

/**
 * The building blocks every edge input is made of: the tRPC procedures' inputs, the Work Graph of a
 * Change and the git endpoint's names. Postgres stores no NUL character in text or JSON, so a
 * string with one is refused here with a message that says so, instead of failing in the database
 * (and answering 500) after the request was accepted.
 */
export const NUL_MESSAGE = "must not contain a NUL character (\\u0000)";

export const hasNoNul = (s: string): boolean => !s.includes("\u0000");

/**
 * A string of at most `max` characters without NUL. Chain `.trim()`, `.min()` and the like as with
 * `z.string()`; every string in an edge input starts here.
 */
export function safeText(max: number) {
  return z.string().max(max).refine(hasNoNul, { message: NUL_MESSAGE, abort: true });
}

/**
 * A row ID as this system makes them (`chg_<uuid>`, `cand_<hex>`, `dl_<consumer>_<key>`, …): ASCII
 * letters, digits and `_ . @ : -`, at most 300 characters. An ID outside this shape names no row,
 * so it is refused before anything reads the database.
 */
export const ID_MAX_LENGTH = 300;
export const idSchema = z
  .string()
  .min(1, "give an ID")
  .max(ID_MAX_LENGTH)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.@:-]*$/, "not an ID: letters, digits and _ . @ : - only");

/** A client's idempotency key (`change.create`'s clientRequestId): any printable text without NUL. */
export const requestIdSchema = safeText(200).trim().min(1, "give a request ID");

const WINDOWS_DRIVE = /^[A-Za-z]:/;
// C0 controls and DEL: a newline or a tab in a file name breaks patches and the code view.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Whether a path segment names git's own folder. Case-insensitive (macOS and Windows file systems
 * fold case), and with what those file systems drop or alias: trailing dots and spaces (`.git.`)
 * and the 8.3 short name (`git~1`).
 */
function isGitDir(segment: string): boolean {
  const s = segment.toLowerCase().replace(/[. ]+$/, "");
  return s === ".git" || s === "git~1";
}

/**
 * Why `p` is not a path inside a repository's work tree, or null when it is one: relative,
 * `/`-separated, no `.` or `..` segment, no empty segment (a prefix may end with one `/`), no
 * drive letter or backslash, no control character, and never into `.git` at any depth (an Agent
 * writing `.git/hooks/pre-commit` would run code outside the Sandbox's rules).
 */
export function repoPathProblem(p: string): string | null {
  const shown = JSON.stringify(p);
  if (p.length === 0) return "give a repository path";
  if (CONTROL.test(p)) return `path ${shown} contains a control character`;
  if (p.includes("\\")) return `path ${shown} contains a backslash; use / between folders`;
  if (p.startsWith("/") || WINDOWS_DRIVE.test(p))
    return `path ${shown} is absolute; give it relative to the repository root`;
  const segments = p.split("/");
  for (const [i, s] of segments.entries()) {
    if (s === "..") return `path ${shown} has a '..' segment; it must stay inside the repository`;
    if (s === ".") return `path ${shown} has a '.' segment`;
    if (s === "" && i < segments.length - 1) return `path ${shown} has an empty segment ('//' or a leading '/')`;
    if (isGitDir(s)) return `path ${shown} enters .git, which is not part of the repository's files`;
  }
  return null;
}

export const REPO_PATH_MAX_LENGTH = 500;

/** A path inside a repository's work tree (see `repoPathProblem`); the message names the path. */
export const repoPathSchema = z
  .string()
  .max(REPO_PATH_MAX_LENGTH)
  .superRefine((p, ctx) => {
    const problem = repoPathProblem(p);
    if (problem) ctx.addIssue({ code: "custom", message: problem, input: p });
  });

/** UTF-8 length of a string without encoding it (lone surrogates count as the 3 bytes they become). */
export function utf8Bytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}
