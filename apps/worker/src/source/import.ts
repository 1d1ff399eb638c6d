import * as fs from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { ImportCredentials, ImportSource } from "@rhumbatron/core";
import git, { type GitHttpRequest, type GitHttpResponse, type HttpClient } from "isomorphic-git";
import {
  copyBranch,
  copyCommit,
  copyFromFolder,
  countFiles,
  type ImportLimits,
  ImportRefused,
  localGitdir,
  mb,
  pickBranch,
} from "./import-local.ts";
import { importSubmodules } from "./submodules.ts";

export { type ImportLimits, ImportRefused } from "./import-local.ts";

/**
 * Reading another repository's history into a new bare repository (docs/repositories.md),
 * with isomorphic-git only: over HTTP its smart-protocol client, from a local folder its object
 * reader. Nothing of the source runs: no hooks, no checkout (so no filters). A gitlink is kept as
 * the commit id it is; its repository is fetched only when the import allows submodules
 * (./submodules.ts), and then only read, like the superproject.
 */

/** Whether the import fetches submodules, and the check a local submodule source must pass (the store's). */
export interface SubmoduleOptions {
  allowed: boolean;
  refuseLocal?: (path: string) => Promise<void>;
}

/**
 * Fetches `source`'s branch (or its HEAD branch) into the empty bare repository `gitdir`, and with
 * `submodules.allowed` what its gitlinks name (each submodule within the same limits); returns the
 * head commit.
 */
export async function importHistory(
  gitdir: string,
  source: ImportSource,
  branch: string | null,
  limits: ImportLimits,
  credentials: ImportCredentials | null = null,
  submodules: SubmoduleOptions = { allowed: false },
): Promise<{ commit: string; branch: string }> {
  const fetched =
    source.kind === "http"
      ? await fetchOverHttp(gitdir, source.url, branch, limits, credentials)
      : await copyFromFolder(gitdir, source.path, branch, limits);
  const files = await countFiles(gitdir, fetched.commit, limits.maxFiles);
  if (files > limits.maxFiles) {
    throw new ImportRefused(
      `the branch ${fetched.branch} holds more than ${limits.maxFiles.toLocaleString("en-US")} files (source.importMaxFiles)`,
    );
  }
  if (submodules.allowed) {
    const origin = source.kind === "http" ? new URL(source.url).origin : null;
    await importSubmodules(
      gitdir,
      source,
      fetched.commit,
      async (sub, commit, where) => {
        if (sub.kind === "local") {
          await submodules.refuseLocal?.(sub.path);
          await copyCommit(gitdir, await localGitdir(sub.path), `the submodule ${where} (${sub.path})`, commit, limits);
          return;
        }
        // The credentials given are for the superproject's server: sent to the same origin only.
        const same = origin !== null && new URL(sub.url).origin === origin;
        await fetchBranchesOverHttp(gitdir, sub.url, limits, same ? credentials : null);
      },
      (message) => new ImportRefused(message),
    );
  }
  return fetched;
}

/**
 * The HTTP client isomorphic-git talks through: Node's own http/https, with the limits an import
 * needs that isomorphic-git's node client lacks: a request with no answer (no bytes for
 * `idleSeconds`) fails instead of holding the integration queue forever, and a response body is
 * stopped once the import has received more than `maxBytes`. A GET's redirects to http(s) are
 * followed (at most 5), as git does.
 */
function importHttp(limits: ImportLimits): { client: HttpClient; overLimit: () => ImportRefused | null } {
  let received = 0;
  // isomorphic-git may wrap or swallow an error its body stream throws; the breach is kept here too.
  let overLimit: ImportRefused | null = null;
  const send = (req: GitHttpRequest, hops: number): Promise<GitHttpResponse> =>
    new Promise((resolve, reject) => {
      const url = new URL(req.url);
      const chunks: Uint8Array[] = [];
      const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(
        url,
        { method: req.method ?? "GET", headers: req.headers ?? {}, timeout: limits.idleSeconds * 1000 },
        (res) => {
          const status = res.statusCode ?? 0;
          const location = res.headers.location;
          if (status >= 300 && status < 400 && location && hops < 5 && (req.method ?? "GET") === "GET") {
            res.resume();
            const next = new URL(location, url);
            if (next.protocol !== "http:" && next.protocol !== "https:")
              return reject(new ImportRefused(`${req.url} redirects to ${next.protocol}, which is not accepted`));
            // The credentials are for the source's origin only: never sent on to another one.
            const headers = { ...(req.headers ?? {}) };
            if (next.origin !== url.origin) delete headers.Authorization;
            return resolve(send({ ...req, headers, url: next.toString() }, hops + 1));
          }
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = String(v);
          async function* body() {
            for await (const chunk of res as AsyncIterable<Buffer>) {
              received += chunk.length;
              if (received > limits.maxBytes) {
                overLimit = new ImportRefused(
                  `the repository is larger than ${mb(limits.maxBytes)} (source.importMaxBytes)`,
                );
                throw overLimit;
              }
              yield new Uint8Array(chunk);
            }
          }
          resolve({
            url: url.toString(),
            method: req.method ?? "GET",
            statusCode: status,
            statusMessage: res.statusMessage ?? "",
            headers,
            body: body(),
          });
        },
      );
      request.on("timeout", () =>
        request.destroy(new Error(`${url.host} sent nothing for ${limits.idleSeconds} s (source.importIdleSeconds)`)),
      );
      request.on("error", reject);
      (async () => {
        for await (const chunk of req.body ?? []) chunks.push(chunk);
        request.end(Buffer.concat(chunks));
      })().catch((err: unknown) => request.destroy(err as Error));
    });
  return { client: { request: (req) => send(req, 0) }, overLimit: () => overLimit };
}

async function fetchOverHttp(
  gitdir: string,
  url: string,
  wanted: string | null,
  limits: ImportLimits,
  credentials: ImportCredentials | null,
): Promise<{ commit: string; branch: string }> {
  const { client, overLimit } = importHttp(limits);
  // HTTP Basic on every request; an error names the URL and the status, never the header.
  const headers: Record<string, string> = credentials
    ? {
        Authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`,
      }
    : {};
  const given = credentials !== null;
  let info: Awaited<ReturnType<typeof git.getRemoteInfo2>>;
  try {
    info = await git.getRemoteInfo2({ http: client, url, protocolVersion: 1, headers });
  } catch (err) {
    throw overLimit() ?? refusedByServer(url, err, given) ?? scrubbed(err, credentials);
  }
  const refs = info.refs ?? [];
  const heads = refs.filter((r) => r.ref.startsWith("refs/heads/")).map((r) => r.ref.slice("refs/heads/".length));
  const headTarget = refs.find((r) => r.ref === "HEAD")?.target;
  const headBranch = headTarget?.startsWith("refs/heads/") ? headTarget.slice("refs/heads/".length) : null;
  const branch = pickBranch(url, heads, wanted, headBranch);
  try {
    // fetch maps the branch through a remote's refspec; the remote is removed once fetched.
    await git.addRemote({ fs, gitdir, remote: "origin", url, force: true });
    const r = await git.fetch({
      fs,
      http: client,
      gitdir,
      url,
      ref: branch,
      remoteRef: `refs/heads/${branch}`,
      singleBranch: true,
      tags: false,
      headers,
    });
    const breach = overLimit();
    if (breach) throw breach;
    if (!r.fetchHead) throw new ImportRefused(`${url} is an empty repository: it has no branch to import`);
    // fetch records the remote's branch under refs/remotes/; canonical keeps main alone.
    await git.deleteRef({ fs, gitdir, ref: `refs/remotes/origin/${branch}` });
    await git.deleteRemote({ fs, gitdir, remote: "origin" });
    return { commit: r.fetchHead, branch };
  } catch (err) {
    throw overLimit() ?? refusedByServer(url, err, given) ?? scrubbed(err, credentials);
  }
}

/**
 * Every branch of a submodule's server into `gitdir` (a gitlink's commit is fetched by the branches
 * that hold it: a smart-HTTP server need not hand out a commit by its id); the remote-tracking refs
 * are removed, the objects stay.
 */
async function fetchBranchesOverHttp(
  gitdir: string,
  url: string,
  limits: ImportLimits,
  credentials: ImportCredentials | null,
): Promise<void> {
  const { client, overLimit } = importHttp(limits);
  const headers: Record<string, string> = credentials
    ? {
        Authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`,
      }
    : {};
  const remote = "submodule";
  try {
    await git.addRemote({ fs, gitdir, remote, url, force: true });
    await git.fetch({ fs, http: client, gitdir, remote, singleBranch: false, tags: false, headers });
    const breach = overLimit();
    if (breach) throw breach;
  } catch (err) {
    throw overLimit() ?? refusedByServer(url, err, credentials !== null) ?? scrubbed(err, credentials);
  } finally {
    for (const ref of await git.listRefs({ fs, gitdir, filepath: `refs/remotes/${remote}` }).catch(() => []))
      await git.deleteRef({ fs, gitdir, ref: `refs/remotes/${remote}/${ref}` });
    await git.deleteRemote({ fs, gitdir, remote }).catch(() => undefined);
  }
}

/** An error to retry, its message cleared of the password should any layer have echoed it. */
function scrubbed(err: unknown, credentials: ImportCredentials | null): unknown {
  if (!credentials || !(err instanceof Error)) return err;
  const secrets = [
    credentials.password,
    Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64"),
  ];
  if (!secrets.some((s) => err.message.includes(s) || (err.stack ?? "").includes(s))) return err;
  let message = err.message;
  for (const s of secrets) message = message.split(s).join("[credentials]");
  return new Error(message);
}

/**
 * A server's answer that will not change on retry (not found, credentials asked for, not a git
 * server) as ImportRefused; null for what may pass (a refused connection, a 5xx, a timeout).
 */
function refusedByServer(url: string, err: unknown, credentialsGiven = false): ImportRefused | null {
  if (err instanceof ImportRefused) return err;
  const e = err as { code?: string; data?: { statusCode?: number } };
  const status = e.code === "HttpError" ? e.data?.statusCode : undefined;
  if ((status === 401 || status === 403) && credentialsGiven)
    return new ImportRefused(
      `${url} refused the credentials given (HTTP ${status}); check the user name and the password or token, then import again`,
    );
  if (status === 401 || status === 403)
    return new ImportRefused(
      `${url} asks for credentials (HTTP ${status}); import again with a user name and a password or token (the credentials field, or --username with --password-stdin)`,
    );
  if (status === 404) return new ImportRefused(`${url} was not found (HTTP 404)`);
  // 408 and 429 ask to come back later: retried like a server error.
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429)
    return new ImportRefused(`${url} refused (HTTP ${status})`);
  // Not the response's text: it is shown to people, and the URL may name any server the worker reaches.
  if (e.code === "SmartHttpError" || e.code === "ParseError")
    return new ImportRefused(`${url} does not answer as a git server (smart HTTP)`);
  return null;
}

/**
 * Reads a pushed repository (docs/repositories.md, Pushing into an empty project), received into
 * `quarantine`, the
 * way a local import is read, with the same limits. The branch: the one pushed; of several, main,
 * then master; anything else is refused, as is a push that holds no branch.
 */
export async function importPushedHistory(
  gitdir: string,
  quarantine: string,
  limits: ImportLimits,
): Promise<{ commit: string; branch: string }> {
  const heads = await git.listBranches({ fs, gitdir: quarantine });
  const where = "the push";
  if (heads.length === 0)
    throw new ImportRefused(`${where} holds no branch (an empty repository or only tags): push a branch`);
  const branch = heads.length === 1 ? heads[0] : ["main", "master"].find((b) => heads.includes(b));
  if (!branch) {
    const some = [...heads].sort().slice(0, 10).join(", ");
    throw new ImportRefused(
      `${where} holds several branches (${some}${heads.length > 10 ? ", …" : ""}) and neither main nor master; push one branch`,
    );
  }
  const fetched = await copyBranch(gitdir, quarantine, where, branch, limits);
  const files = await countFiles(gitdir, fetched.commit, limits.maxFiles);
  if (files > limits.maxFiles)
    throw new ImportRefused(
      `the branch ${branch} holds more than ${limits.maxFiles.toLocaleString("en-US")} files (source.importMaxFiles)`,
    );
  return fetched;
}
