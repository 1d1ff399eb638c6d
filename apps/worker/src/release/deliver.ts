import { randomUUID } from "node:crypto";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import { DomainError } from "@rhumbatron/core";

/**
 * Delivering a released tree to the project's release target: a folder on the worker host
 * (default `<releaseRoot>/<project>/<generation>/`) or a webhook that receives the file list.
 * The target's schema lives in core (`releaseTargetSchema`), shared with the web that sets it.
 */
export interface ReleasedFile {
  path: string;
  blob: string;
  size: number;
  /** Exported with mode 0755 (git mode 100755), otherwise 0644. */
  executable?: boolean;
}

/**
 * Writes every file into a temporary folder beside `dest`, then renames it into place, so a reader
 * sees the whole release or none of it; a repeat replaces the folder with the same content.
 */
export async function exportToFolder(
  dest: string,
  files: readonly ReleasedFile[],
  read: (f: ReleasedFile) => Promise<Uint8Array>,
): Promise<{ path: string; files: number; bytes: number }> {
  const parent = dirname(dest);
  await mkdir(parent, { recursive: true });
  const tmp = join(parent, `.${basename(dest)}.tmp-${randomUUID()}`);
  let bytes = 0;
  try {
    await mkdir(tmp);
    for (const f of files) {
      const file = resolve(tmp, f.path);
      if (!file.startsWith(tmp + sep)) throw new DomainError("INVALID_INPUT", `unsafe path in the tree: ${f.path}`);
      await mkdir(dirname(file), { recursive: true });
      const body = await read(f);
      await writeFile(file, body, { mode: f.executable ? 0o755 : 0o644 });
      bytes += body.length;
    }
    const old = join(parent, `.${basename(dest)}.old-${randomUUID()}`);
    const had = await stat(dest).then(
      () => true,
      () => false,
    );
    if (had) await rename(dest, old);
    await rename(tmp, dest);
    if (had) await rm(old, { recursive: true, force: true });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return { path: dest, files: files.length, bytes };
}

export interface WebhookRelease {
  releaseId: string;
  projectId: string;
  generation: number;
  commit: string;
  tree: string;
  files: ReleasedFile[];
}

/** POSTs the release as JSON; anything but a 2xx answer within the timeout is a failure. */
export async function postToWebhook(
  url: string,
  body: WebhookRelease,
  o: { timeoutMs: number; fetch?: typeof fetch },
): Promise<{ url: string; status: number; files: number }> {
  const f = o.fetch ?? fetch;
  let res: Response;
  try {
    res = await f(url, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": body.releaseId },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(o.timeoutMs),
    });
  } catch (err) {
    const name = (err as Error).name;
    if (name === "TimeoutError" || name === "AbortError") {
      throw new Error(`webhook ${url} did not answer within ${o.timeoutMs} ms`);
    }
    throw new Error(`webhook ${url} unreachable: ${(err as Error).message}`);
  }
  if (!res.ok) {
    const text = (await res.text().catch(() => "")).slice(0, 300);
    throw new Error(`webhook ${url} answered ${res.status}${text ? `: ${text}` : ""}`);
  }
  await res.body?.cancel().catch(() => {});
  return { url, status: res.status, files: body.files.length };
}
