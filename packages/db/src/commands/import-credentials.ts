import { DomainError, type ImportCredentials, importCredentialsSchema } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { openSealed, sealText } from "../sealed.ts";
import type { TxContext } from "../transaction.ts";

/**
 * An import's credentials on their way from the API to the worker (docs/repositories.md):
 * sealed (../sealed.ts: AES-256-GCM under a key derived from the server's auth secret), in one
 * import_credentials row that the provisioning transaction deletes.
 */
const sealing = (secret: string, projectId: string) => ({ secret, purpose: "import credentials", aad: projectId });

export function sealCredentials(c: ImportCredentials, secret: string, projectId: string): string {
  return sealText(JSON.stringify(c), sealing(secret, projectId));
}

/** The credentials, or null when the sealed text was made with another secret or for another project. */
export function openCredentials(sealed: string, secret: string, projectId: string): ImportCredentials | null {
  const text = openSealed(sealed, sealing(secret, projectId));
  if (text === null) return null;
  try {
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
