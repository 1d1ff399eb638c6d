/**
 * The blob store port (docs/protocol.md, Repository names): keys are `/`-separated paths such as
 * `events/<day>/stream-<NN>/part-….ndjson.gz` or `source/<project>/…`. A local folder is the
 * default adapter; an S3-compatible one can follow.
 */
export interface BlobObject {
  body: Uint8Array;
  metadata: Record<string, string>;
}

export interface BlobStore {
  put(key: string, body: Uint8Array, metadata?: Record<string, string>): Promise<void>;
  get(key: string): Promise<BlobObject | null>;
  has(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Every key under a prefix, sorted. */
  list(prefix: string): Promise<string[]>;
}

const SEGMENT = /^[A-Za-z0-9._@=+-]+$/;

/** Keys are relative paths of safe segments: no `..`, no empty segment, no leading slash. */
export function isValidBlobKey(key: string): boolean {
  const parts = key.split("/");
  return parts.length > 0 && parts.every((p) => SEGMENT.test(p) && p !== "." && p !== "..");
}
