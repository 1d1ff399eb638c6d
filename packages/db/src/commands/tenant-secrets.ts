import { DomainError, secretNameSchema, setSecretInput } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { openSealed, sealText } from "../sealed.ts";

/**
 * Tenant secrets (docs/agents.md, Secrets): API keys an admin sets for the tenant's Agent runs. The value is
 * sealed (../sealed.ts) under the server's auth secret, bound to the tenant and the name, and only
 * readTenantSecrets, for a run, ever opens it: no answer, Event or log carries it. Secrets are
 * tenant settings, like the Sandbox budget and the members: Events are a project's history (their
 * envelope names a project), so a secret's change is recorded in its row (when, by whom), not there.
 */
const sealing = (secret: string, tenantId: string, name: string) => ({
  secret,
  purpose: "tenant secrets",
  aad: JSON.stringify([tenantId, name]),
});

/** A secret as lists show it: never its value, nor anything computed from it. */
export interface TenantSecretSummary {
  name: string;
  createdAt: Date;
  updatedAt: Date;
  /** Who set the current value; null when that user no longer exists. */
  setBy: { userId: string; name: string; email: string } | null;
}

export interface SetTenantSecretResult {
  name: string;
  /** False when it replaced a value set before. */
  created: boolean;
  updatedAt: Date;
}

/** What a run could not get: secrets the tenant has not set, or set under another auth secret. */
export class TenantSecretError extends DomainError {
  constructor(
    readonly kind: "missing" | "unreadable",
    readonly names: string[],
  ) {
    const list = names.join(", ");
    super(
      "PRECONDITION_FAILED",
      kind === "missing"
        ? `the tenant has no secret ${list}: an admin sets it (rhumbatron secrets set, or Settings → Secrets)`
        : `the secret ${list} cannot be opened with this server's RHUMBATRON_AUTH_SECRET: the auth secret changed since it was set; an admin must set it again`,
      { kind, names },
    );
    this.name = "TenantSecretError";
  }
}

function parseName(name: string): string {
  const parsed = secretNameSchema.safeParse(name);
  if (!parsed.success) throw new DomainError("INVALID_INPUT", `name: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/** Creates the secret or replaces its value (admins; the router checks the role). */
export async function setTenantSecret(
  db: Db,
  input: { tenantId: string; name: string; value: string; userId: string },
  deps: { authSecret: string | undefined; now: Date },
): Promise<SetTenantSecretResult> {
  const parsed = setSecretInput.safeParse({ name: input.name, value: input.value });
  if (!parsed.success) {
    // The issue's message only: zod's own text could quote the value.
    throw new DomainError(
      "INVALID_INPUT",
      parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
    );
  }
  if (!deps.authSecret) {
    throw new DomainError("PRECONDITION_FAILED", "this server has no RHUMBATRON_AUTH_SECRET to seal secrets with");
  }
  const { name, value } = parsed.data;
  const sealed = sealText(value, sealing(deps.authSecret, input.tenantId, name));
  const rows = await db.$queryRaw<{ created: boolean; updated_at: Date }[]>`
    INSERT INTO tenant_secrets (tenant_id, name, sealed, created_at, updated_at, updated_by)
    VALUES (${input.tenantId}, ${name}, ${sealed}, ${deps.now}, ${deps.now}, ${input.userId})
    ON CONFLICT (tenant_id, name) DO UPDATE
      SET sealed = EXCLUDED.sealed, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by
    RETURNING (xmax = 0) AS created, updated_at`;
  const row = rows[0];
  if (!row) throw new Error("tenant_secrets upsert returned no row");
  return { name, created: row.created, updatedAt: row.updated_at };
}

/** The tenant's secrets by name: when and by whom each was set, never a value. */
export async function listTenantSecrets(db: Db, tenantId: string): Promise<TenantSecretSummary[]> {
  const rows = await db.tenantSecret.findMany({
    where: { tenantId },
    orderBy: { name: "asc" },
    select: { name: true, createdAt: true, updatedAt: true, updatedBy: true },
  });
  const users = await db.user.findMany({
    where: { id: { in: [...new Set(rows.map((r) => r.updatedBy))] } },
    select: { id: true, name: true, email: true },
  });
  const byId = new Map(users.map((u) => [u.id, { userId: u.id, name: u.name, email: u.email }]));
  return rows.map((r) => ({
    name: r.name,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    setBy: byId.get(r.updatedBy) ?? null,
  }));
}

/** Deletes the secret; runs started after this no longer get it. NOT_FOUND when the tenant has none of that name. */
export async function deleteTenantSecret(db: Db, input: { tenantId: string; name: string }): Promise<{ name: string }> {
  const name = parseName(input.name);
  const { count } = await db.tenantSecret.deleteMany({ where: { tenantId: input.tenantId, name } });
  if (count === 0) throw new DomainError("NOT_FOUND", `the tenant has no secret ${name}`);
  return { name };
}

/**
 * The values a run gets as environment variables: the named secrets (every one must be set), or
 * all of the tenant's when `names` is left out. Throws TenantSecretError: `missing` names the
 * secrets the tenant has not set, `unreadable` those sealed under another RHUMBATRON_AUTH_SECRET
 * (they must be set again). The caller keeps the values out of logs (core redactSecrets).
 */
export async function readTenantSecrets(
  db: Db,
  tenantId: string,
  names: readonly string[] | undefined,
  authSecret: string | undefined,
): Promise<Record<string, string>> {
  const wanted = names === undefined ? undefined : [...new Set(names.map(parseName))];
  const rows = await db.tenantSecret.findMany({
    where: { tenantId, ...(wanted ? { name: { in: wanted } } : {}) },
    orderBy: { name: "asc" },
    select: { name: true, sealed: true },
  });
  const missing = (wanted ?? []).filter((n) => !rows.some((r) => r.name === n));
  if (missing.length) throw new TenantSecretError("missing", missing.sort());
  const values: Record<string, string> = {};
  const unreadable: string[] = [];
  for (const row of rows) {
    const value = authSecret ? openSealed(row.sealed, sealing(authSecret, tenantId, row.name)) : null;
    if (value === null) unreadable.push(row.name);
    else values[row.name] = value;
  }
  if (unreadable.length) throw new TenantSecretError("unreadable", unreadable);
  return values;
}
