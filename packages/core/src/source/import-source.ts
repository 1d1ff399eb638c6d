import { z } from "zod";
import { hasNoNul, NUL_MESSAGE } from "../input.ts";

/**
 * Where an imported project's history comes from (docs/repositories.md). Accepted: an
 * http(s) URL, a file:// URL, or an absolute path on the worker's host. Refused, before anything is
 * written: ssh and git:// URLs, scp-like `user@host:path`, relative paths, and any URL with a user
 * name or password in it (credentials go in their own field: importCredentialsSchema).
 */
export const IMPORT_ACCEPTS =
  "an http:// or https:// URL, a file:// URL or an absolute path on the server (such as /srv/git/shop.git)";

export const IMPORT_FROM_MAX_LENGTH = 2000;

/** What the worker reads: `http` (smart or dumb HTTP, isomorphic-git's client) or `local` (a folder). */
export type ImportSource = { kind: "http"; url: string } | { kind: "local"; path: string; url: string };

export type ImportSourceResult = { ok: true; source: ImportSource } | { ok: false; message: string };

/** `what` ends with its verb ("ssh:// URLs are", "a network path is"). */
const notAccepted = (what: string): ImportSourceResult => ({
  ok: false,
  message: `${what} not accepted; give ${IMPORT_ACCEPTS}`,
});

/** Decodes a file:// URL's path (no host, or localhost); null when it names another host. */
function fileUrlPath(url: URL): string | null {
  if (url.hostname !== "" && url.hostname !== "localhost") return null;
  try {
    return decodeURIComponent(url.pathname);
  } catch {
    return null;
  }
}

/**
 * Reads `from` as an import source. The URL kept (and shown) never holds credentials: one that
 * carries them is refused rather than stripped, so nobody believes they were used.
 */
export function parseImportSource(from: string): ImportSourceResult {
  const text = from.trim();
  if (text === "") return { ok: false, message: `give ${IMPORT_ACCEPTS}` };
  if (!hasNoNul(text)) return { ok: false, message: `the source ${NUL_MESSAGE}` };
  if (text.startsWith("/")) {
    if (text.startsWith("//")) return notAccepted("a network path is");
    return { ok: true, source: { kind: "local", path: text, url: text } };
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Relative paths and scp-like `git@host:team/shop.git` land here.
    return notAccepted(`"${text.slice(0, 200)}" (not a URL nor an absolute path) is`);
  }
  if (!["http:", "https:", "file:"].includes(url.protocol))
    return notAccepted(`${url.protocol.replace(/:$/, "")}:// URLs are`);
  if (url.username !== "" || url.password !== "") {
    return {
      ok: false,
      message: `the URL carries credentials; give the URL without a user name or password and the credentials separately (the credentials field, or --username with --password-stdin)`,
    };
  }
  switch (url.protocol) {
    case "http:":
    case "https:":
      url.hash = "";
      return { ok: true, source: { kind: "http", url: url.toString() } };
    case "file:": {
      const path = fileUrlPath(url);
      if (path === null) return notAccepted("a file:// URL naming another host is");
      if (!path.startsWith("/") || !hasNoNul(path)) return notAccepted("this file:// URL is");
      return { ok: true, source: { kind: "local", path, url: `file://${url.pathname}` } };
    }
    default:
      return notAccepted(`${url.protocol.replace(/:$/, "")}:// URLs are`);
  }
}

/**
 * A branch name git would accept (`git check-ref-format --branch`, the common rules): no space,
 * control character, `~ ^ : ? * [ \`, no `..`, `@{`, leading `-` or `/`, no `.lock` or `/` at the end.
 */
export const branchName = z
  .string()
  .trim()
  .min(1, "give a branch name")
  .max(200)
  .refine(
    (b) =>
      ![...b].some((c) => c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f || "~^:?*[\\".includes(c)) &&
      !b.includes("..") &&
      !b.includes("@{") &&
      !b.includes("//") &&
      !/^[-/.]/.test(b) &&
      !/(\/|\.lock|\.)$/.test(b) &&
      !b.split("/").some((part) => part.startsWith(".")) &&
      b !== "@",
    { message: "not a branch name git accepts" },
  );

/** The `from` of projects.import: read with parseImportSource, refused with its message. */
export const importFromSchema = z
  .string()
  .max(IMPORT_FROM_MAX_LENGTH)
  .superRefine((from, ctx) => {
    const r = parseImportSource(from);
    if (!r.ok) ctx.addIssue({ code: "custom", message: r.message });
  });

/** A project's source as stored on its row: where it came from and which branch (null: the source's HEAD). */
export interface ProjectSource {
  kind: "template" | "import";
  url: string | null;
  branch: string | null;
}

/**
 * The user name and password or token of a private http(s) source (docs/repositories.md),
 * given once with projects.import. HTTP Basic: the user name cannot hold a colon.
 */
export const importCredentialsSchema = z.object({
  username: z
    .string()
    .min(1, "give a user name")
    .max(200)
    .refine((u) => hasNoNul(u) && !u.includes(":") && !/[\r\n]/.test(u), {
      message: "a user name cannot hold a colon, a line break or a NUL",
    }),
  password: z
    .string()
    .min(1, "give the password or token")
    .max(4000)
    .refine((p) => hasNoNul(p) && !/[\r\n]/.test(p), { message: "the password cannot hold a line break or a NUL" }),
});

export type ImportCredentials = z.infer<typeof importCredentialsSchema>;
