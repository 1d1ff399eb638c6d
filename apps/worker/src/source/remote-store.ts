import * as fs from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { DomainError } from "@rhumbatron/core";
import git, { Errors } from "isomorphic-git";
import http from "isomorphic-git/http/node";
import { MAIN } from "./canonical-build.ts";
import type { Identity } from "./git-objects.ts";
import {
  decodeValue,
  encodeValue,
  errorFromWire,
  type RemoteMethod,
  SOURCE_RPC_PREFIX,
  type WireError,
} from "./service-rpc.ts";
import type { SourceApi } from "./store.ts";
import { type Gitlink, materializeSubmodules } from "./submodules.ts";
import { type ComposeOptions, type ComposeSource, commitWorkingCopy, composeInWorkingCopy } from "./working-copy.ts";

export interface RemoteSourceOptions {
  /** The source service's base URL (RHUMBATRON_SOURCE_URL), e.g. `http://10.0.0.5:3031`. */
  url: string;
  /** sourceServiceKey(auth secret): proves the caller is a worker of this installation. */
  key: string;
  now: () => Date;
}

type Args<M extends RemoteMethod> = Parameters<SourceApi[M]>;
type Result<M extends RemoteMethod> = Awaited<ReturnType<SourceApi[M]>>;

/**
 * The source store of a worker that does not hold the repositories (docs/scale-out.md): every
 * operation on repositories is a call to the source service (service-rpc.ts); a working copy is
 * cloned, fetched into and pushed from over git's smart HTTP with the same repo tokens. The worker's
 * own disk holds only its working copies.
 */
export class RemoteSourceStore implements SourceApi {
  private readonly base: string;

  constructor(private readonly o: RemoteSourceOptions) {
    this.base = o.url.replace(/\/+$/, "");
  }

  private async call<M extends RemoteMethod>(method: M, ...args: Args<M>): Promise<Result<M>> {
    let res: Response;
    try {
      res = await fetch(`${this.base}${SOURCE_RPC_PREFIX}${method}`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.o.key}`, "content-type": "application/json" },
        body: JSON.stringify({ args: encodeValue(args) }),
      });
    } catch (err) {
      throw new DomainError("UNAVAILABLE", `the source service at ${this.base} cannot be reached: ${message(err)}`);
    }
    const body = (await res.json().catch(() => null)) as { result?: unknown; error?: WireError } | null;
    if (res.ok && body && "result" in body) return decodeValue(body.result) as Result<M>;
    if (body?.error) throw errorFromWire(body.error);
    throw new DomainError("UNAVAILABLE", `the source service at ${this.base} answered ${res.status} to ${method}`);
  }

  private repoUrl(repo: string): string {
    return `${this.base}/git/${repo}.git`;
  }

  exists = (...a: Args<"exists">) => this.call("exists", ...a);
  provision = (...a: Args<"provision">) => this.call("provision", ...a);
  importRepository = (...a: Args<"importRepository">) => this.call("importRepository", ...a);
  importPushed = (...a: Args<"importPushed">) => this.call("importPushed", ...a);
  head = (...a: Args<"head">) => this.call("head", ...a);
  commitInfo = (...a: Args<"commitInfo">) => this.call("commitInfo", ...a);
  fork = (...a: Args<"fork">) => this.call("fork", ...a);
  delete = (...a: Args<"delete">) => this.call("delete", ...a);
  rewind = (...a: Args<"rewind">) => this.call("rewind", ...a);
  fastForward = (...a: Args<"fastForward">) => this.call("fastForward", ...a);
  tag = (...a: Args<"tag">) => this.call("tag", ...a);
  diff = (...a: Args<"diff">) => this.call("diff", ...a);
  files = (...a: Args<"files">) => this.call("files", ...a);
  readBlob = (...a: Args<"readBlob">) => this.call("readBlob", ...a);
  hasCommit = (...a: Args<"hasCommit">) => this.call("hasCommit", ...a);
  treeOf = (...a: Args<"treeOf">) => this.call("treeOf", ...a);

  /** A working copy of `repo` at `commit` (default: its main), cloned over HTTP with a read token. */
  async checkout(repo: string, token: string, dir: string, commit?: string): Promise<string> {
    await mkdir(dir, { recursive: true });
    await this.git(repo, () =>
      git.clone({
        fs,
        http,
        dir,
        url: this.repoUrl(repo),
        ref: "main",
        singleBranch: true,
        noCheckout: true,
        noTags: true,
        onAuth: auth(token),
      }),
    );
    const at = commit ?? (await git.resolveRef({ fs, dir, ref: MAIN }));
    await git.writeRef({ fs, dir, ref: MAIN, value: at, force: true });
    await git.checkout({ fs, dir, ref: "main", force: true });
    return at;
  }

  materializeSubmodules(dir: string): Promise<{ written: Gitlink[]; missing: Gitlink[] }> {
    return materializeSubmodules(dir);
  }

  /** Fetches each ChangeSet's repository into the working copy, then composes there (working-copy.ts). */
  async compose(dir: string, onto: string, sources: ComposeSource[], o: ComposeOptions): Promise<string> {
    for (const [i, s] of sources.entries()) {
      const remote = `source-${i}`;
      await git.addRemote({ fs, dir, remote, url: this.repoUrl(s.repo), force: true });
      await this.git(s.repo, () =>
        git.fetch({ fs, http, dir, remote, ref: "main", singleBranch: true, tags: false, onAuth: auth(s.token) }),
      );
      await git.readCommit({ fs, dir, oid: s.commit }).catch(() => {
        throw new DomainError(
          "NOT_FOUND",
          `commit ${s.commit.slice(0, 12)} of ChangeSet ${s.changeSetId} is not on ${s.repo}'s main`,
        );
      });
    }
    return composeInWorkingCopy(dir, onto, sources, o);
  }

  commitAll(dir: string, message: string, who: Identity): Promise<string | null> {
    return commitWorkingCopy(dir, message, who, this.o.now());
  }

  /** Moves `repo`'s main to the working copy's main over HTTP with a write token; fast-forward only. */
  async push(dir: string, repo: string, token: string): Promise<string> {
    const next = await git.resolveRef({ fs, gitdir: join(dir, ".git"), ref: MAIN });
    const r = await this.git(repo, () =>
      git.push({ fs, http, dir, url: this.repoUrl(repo), ref: "main", remoteRef: "main", onAuth: auth(token) }),
    );
    const refused = r.ok ? null : (r.error ?? r.refs["refs/heads/main"]?.error ?? "refused");
    if (refused) throw new DomainError("CONFLICT", `push to ${repo} was refused: ${refused}`);
    return next;
  }

  /** git over HTTP, its failures said as the store's: refused, not a fast-forward, missing, unreachable. */
  private async git<T>(repo: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (err instanceof Errors.PushRejectedError)
        throw new DomainError("CONFLICT", `push to ${repo} is not a fast-forward of its main`);
      if (err instanceof Errors.HttpError) {
        const status = (err.data as { statusCode?: number }).statusCode;
        if (status === 401 || status === 403)
          throw new DomainError("FORBIDDEN", `the source service refused ${repo}: ${err.message}`);
        if (status === 404) throw new DomainError("NOT_FOUND", `repository ${repo} not found`);
      }
      if (isNetworkError(err))
        throw new DomainError("UNAVAILABLE", `the source service at ${this.base} cannot be reached: ${message(err)}`);
      throw err;
    }
  }
}

const auth = (token: string) => () => ({ username: "x", password: token });
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));
const isNetworkError = (err: unknown) =>
  err instanceof Error &&
  /ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|socket hang up|fetch failed/i.test(err.message);
