import { randomUUID } from "node:crypto";
import { DomainError, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from "@rhumbatron/core";
import { verifyPassword } from "better-auth/crypto";
import { z } from "zod";
import type { Db } from "../client.ts";
import { Prisma } from "../generated/prisma/client.ts";
import { Role } from "../generated/prisma/enums.ts";
import { withTransaction } from "../transaction.ts";
import { normalizeEmail } from "./members.ts";
import { CREDENTIAL_PROVIDER, hashUserPassword, storePasswordHash } from "./passwords.ts";

/**
 * What an operator does with `npm run admin` (scripts/admin.ts; docs/sign-in.md,
 * Operators): create a tenant, and put a person with a chosen password into one. Sign-up is closed
 * and the members page needs an admin of the tenant, so this is how a deployment gets its first
 * admin, and how someone with the database's address adds people without a browser. Both functions
 * are idempotent: run again with the same input, they write nothing.
 */
export const tenantSlugSchema = z
  .string()
  .trim()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9][a-z0-9-]*$/, "lowercase letters, digits and '-', starting with a letter or digit");

export interface TenantSummary {
  tenantId: string;
  slug: string;
  name: string;
  /** False when a tenant with this slug was there already (it is left as it is). */
  created: boolean;
}

export interface OperatorMember {
  tenantId: string;
  userId: string;
  email: string;
  /** The user's name: the given one for a new user; an existing user keeps theirs. */
  name: string;
  role: Role;
  createdUser: boolean;
  /** Whether the role in the tenant was written (a new membership or another role). */
  roleChanged: boolean;
  /** Whether the password was written; false when the user already had exactly this one. */
  passwordChanged: boolean;
  /** Sessions of an existing user that a new password ended (as a reset by an admin does). */
  endedSessions: number;
}

/** The parsed value, or INVALID_INPUT naming each field that is wrong and how. */
function valid<T>(schema: z.ZodType<T>, value: unknown, what?: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join(".") || what || "input"}: ${i.message}`);
  throw new DomainError("INVALID_INPUT", issues.join("; "));
}

/** Creates the tenant `slug` unless one exists; an existing tenant keeps its name. */
export async function createTenant(db: Db, input: { slug: string; name: string }): Promise<TenantSummary> {
  const slug = valid(tenantSlugSchema, input.slug, "slug");
  const name = valid(z.string().trim().min(1, "give the tenant a name").max(200), input.name, "name");
  const tenantId = `ten_${randomUUID()}`;
  return withTransaction(db, async ({ tx }) => {
    // ON CONFLICT DO NOTHING: two operators creating the same slug at once both end with the one tenant.
    await tx.tenant.createMany({ data: [{ id: tenantId, slug, name }], skipDuplicates: true });
    const row = await tx.tenant.findUniqueOrThrow({ where: { slug } });
    return { tenantId: row.id, slug: row.slug, name: row.name, created: row.id === tenantId };
  });
}

const memberInput = z.object({
  tenantSlug: tenantSlugSchema,
  email: z.email("an email address such as ann@example.com"),
  name: z.string().trim().min(1, "give the person a name").max(200),
  role: z.enum(Role),
  password: z
    .string()
    .min(MIN_PASSWORD_LENGTH, `the password needs at least ${MIN_PASSWORD_LENGTH} characters`)
    .max(MAX_PASSWORD_LENGTH, `the password can have at most ${MAX_PASSWORD_LENGTH} characters`),
});

/**
 * Puts a person into the tenant with `role`, signing in with `password`: a new address becomes a
 * user; a known one keeps its name and gets this password and role here. A password that changes
 * ends the user's sessions, as an admin's reset does. The tenant keeps one admin: demoting its last
 * one is refused, as on the members page. One transaction, holding the tenant row's lock as the
 * members page's changes do.
 */
export async function provisionMember(
  db: Db,
  raw: { tenantSlug: string; email: string; name: string; role: Role; password: string },
): Promise<OperatorMember> {
  const input = valid(memberInput, { ...raw, email: normalizeEmail(raw.email) });
  // Hashing is slow on purpose (scrypt): before the transaction, and only for a password that changes.
  const hash = (await hasPassword(db, input.email, input.password)) ? null : await hashUserPassword(input.password);
  try {
    return await withTransaction(db, async ({ tx }) => {
      const [tenant] = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM tenants WHERE slug = ${input.tenantSlug} FOR NO KEY UPDATE`;
      if (!tenant) {
        throw new DomainError(
          "NOT_FOUND",
          `no tenant ${input.tenantSlug}; create it first (npm run admin -- tenant add --slug ${input.tenantSlug} --name …)`,
        );
      }
      const known = await tx.user.findUnique({ where: { email: input.email }, select: { id: true, name: true } });
      const user = known ?? { id: `usr_${randomUUID()}`, name: input.name };
      if (!known) await tx.user.create({ data: { ...user, email: input.email, emailVerified: true } });
      const where = { tenantId_userId: { tenantId: tenant.id, userId: user.id } };
      const before = await tx.membership.findUnique({ where, select: { role: true } });
      if (before?.role === "admin" && input.role !== "admin") {
        const admins = await tx.membership.count({ where: { tenantId: tenant.id, role: "admin" } });
        if (admins === 1) {
          throw new DomainError(
            "PRECONDITION_FAILED",
            `${input.email} is the last admin of ${input.tenantSlug}; make someone else admin first`,
          );
        }
      }
      if (before?.role !== input.role) {
        await tx.membership.upsert({
          where,
          create: { tenantId: tenant.id, userId: user.id, role: input.role },
          update: { role: input.role },
        });
      }
      if (hash) await storePasswordHash(tx, user.id, hash);
      const ended = hash && known ? (await tx.session.deleteMany({ where: { userId: user.id } })).count : 0;
      return {
        tenantId: tenant.id,
        userId: user.id,
        email: input.email,
        name: user.name,
        role: input.role,
        createdUser: !known,
        roleChanged: before?.role !== input.role,
        passwordChanged: hash !== null,
        endedSessions: ended,
      };
    });
  } catch (err) {
    // Someone created the same address at the same moment.
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002") {
      throw new DomainError("CONFLICT", `${input.email} was just created by someone else; run the command again`);
    }
    throw err;
  }
}

/** Whether the user with this address signs in with exactly this password already. */
async function hasPassword(db: Db, email: string, password: string): Promise<boolean> {
  const account = await db.account.findFirst({
    where: { providerId: CREDENTIAL_PROVIDER, user: { email } },
    select: { password: true },
  });
  return account?.password ? verifyPassword({ hash: account.password, password }) : false;
}
