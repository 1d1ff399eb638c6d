import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { CreateBucketCommand, HeadObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";

/**
 * s3rver (the `s3rver` package on npm), a third-party S3-compatible server that keeps buckets in a
 * folder, for the S3 blob store's tests: one child process on 127.0.0.1 at a free port, over a
 * temporary folder, silent. A child process because s3rver makes ListObjectsV2 continuation tokens
 * with DES, which the OpenSSL 3 inside Node offers only through its legacy provider
 * (`--openssl-legacy-provider`); without it every listing of more than one page fails with 500.
 *
 * s3rver knows one key pair, S3RVER/S3RVER. It refuses an access key ID it does not know
 * (403 InvalidAccessKeyId) but does not check SigV4 signatures, so a wrong secret goes through.
 */
export const S3RVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER", region: "auto" } as const;

export interface S3rver {
  /** e.g. http://127.0.0.1:41234 */
  endpoint: string;
  /** Creates an empty bucket through the S3 API; unnamed: a new name each time. */
  createBucket(name?: string): Promise<string>;
  /** Every object key in the bucket, sorted, the store's prefix included. */
  keys(bucket: string): Promise<string[]>;
  /** An object's user metadata as the server keeps it (names without `x-amz-meta-`). */
  rawMetadata(bucket: string, key: string): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

export async function startS3rver(): Promise<S3rver> {
  const directory = await mkdtemp(join(tmpdir(), "rh-s3rver-"));
  const bin = join(dirname(createRequire(import.meta.url).resolve("s3rver/package.json")), "bin", "s3rver.js");
  const args = ["--openssl-legacy-provider", bin, "-d", directory, "-a", "127.0.0.1", "-p", "0", "--silent"];
  const child = spawn(process.execPath, [...args, "--no-vhost-buckets"], { stdio: ["ignore", "pipe", "pipe"] });
  let port: string;
  try {
    port = await listeningPort(child);
  } catch (err) {
    await stopChild(child);
    await rm(directory, { recursive: true, force: true });
    throw err;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, forcePathStyle: true, ...credentialsOf(S3RVER_CREDENTIALS) });
  let buckets = 0;
  return {
    endpoint,
    async createBucket(name = `bucket-${++buckets}`) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
      return name;
    },
    async keys(bucket) {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
        keys.push(...(page.Contents ?? []).flatMap((o) => (o.Key === undefined ? [] : [o.Key])));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys.sort();
    },
    async rawMetadata(bucket, key) {
      return (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).Metadata ?? {};
    },
    async stop() {
      client.destroy();
      await stopChild(child);
      await rm(directory, { recursive: true, force: true });
    },
  };
}

const credentialsOf = (c: typeof S3RVER_CREDENTIALS) => ({
  region: c.region,
  credentials: { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey },
});

/** Waits for the line s3rver prints once it listens, or fails with what it said before it exited. */
function listeningPort(child: ChildProcess): Promise<string> {
  let out = "";
  let err = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    err = `${err}${chunk}`.slice(-4000);
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      out = `${out}${chunk}`.slice(-4000);
      const port = /S3rver listening on 127\.0\.0\.1:(\d+)/.exec(out)?.[1];
      if (port) resolve(port);
    });
    child.once("error", reject);
    child.once("exit", (code, signal) =>
      reject(new Error(`s3rver exited (${code ?? signal}) before listening: ${err}`)),
    );
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
}
