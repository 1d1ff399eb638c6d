import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { DomainError, type ImportCredentials, importCredentialsSchema } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { TxContext } from "../transaction.ts";

/**
 * An import's credentials on their way from the API to the worker (README: Bring your repository):
 * sealed with AES-256-GCM under a key derived (HKDF) from the server's auth secret, in one
 * import_credentials row that the provisioning transaction deletes.
 */
function key(secret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "rhumbatron", "import credentials", 32));
}

export function sealCredentials(c: ImportCredentials, secret: string, projectId: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key(secret), iv);
  cipher.setAAD(Buffer.from(projectId));
  const body = Buffer.concat([cipher.update(JSON.stringify(c), "utf8"), cipher.final()]);
  return ["v1", iv.toString("base64"), cipher.getAuthTag().toString("base64"), body.toString("base64")].join(".");
}

/** The credentials, or null when the sealed text was made with another secret or for another project. */
export function openCredentials(sealed: string, secret: string, projectId: string): ImportCredentials | null {
  const [v, iv, tag, body] = sealed.split(".");
  if (v !== "v1" || !iv || !tag || !body) return null;
  try {
    const d = createDecipheriv("aes-256-gcm", key(secret), Buffer.from(iv, "base64"));
    d.setAAD(Buffer.from(projectId));
    d.setAuthTag(Buffer.from(tag, "base64"));
    const text = Buffer.concat([d.update(Buffer.from(body, "base64")), d.final()]).toString("utf8");
    const parsed = importCredentialsSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export async function storeImportCredentials(
  ctx: TxContext,
  projectId: string,
  c: ImportCredentials,
  secret: string | undefined,
): Promise<void> {
  if (!secret)
    throw new DomainError("PRECONDITION_FAILED", "this server has no secret to seal import credentials with");
  await ctx.tx.importCredential.create({ data: { projectId, sealed: sealCredentials(c, secret, projectId) } });
}

/** The project's import credentials: absent (none given, or already used), or unreadable with this secret. */
export async function readImportCredentials(
  db: Db,
  projectId: string,
  secret: string | undefined,
): Promise<{ kind: "none" } | { kind: "unreadable" } | { kind: "given"; credentials: ImportCredentials }> {
  const row = await db.importCredential.findUnique({ where: { projectId } });
  if (!row) return { kind: "none" };
  const c = secret ? openCredentials(row.sealed, secret, projectId) : null;
  return c ? { kind: "given", credentials: c } : { kind: "unreadable" };
}

/** Deletes them (the transaction that activates, fails or archives the project). */
export async function dropImportCredentials(ctx: TxContext, projectId: string): Promise<void> {
  await ctx.tx.importCredential.deleteMany({ where: { projectId } });
}
