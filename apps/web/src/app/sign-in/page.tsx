import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { Notice } from "../../components/notice.tsx";
import { SignInForm } from "../../components/sign-in-form.tsx";
import { safeNextPath } from "../../lib/auth-client.ts";
import { loadShell } from "../../server/shell.ts";

export const metadata: Metadata = { title: "Sign in · Rhumbatron" };
export const dynamic = "force-dynamic";

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string | string[] }> }) {
  const { next } = await searchParams;
  const target = safeNextPath(Array.isArray(next) ? next[0] : next);
  const shell = await loadShell();
  if (shell.kind === "ready" || shell.kind === "no-tenant") redirect(target);
  return (
    <section className="mx-auto max-w-sm">
      <h1 className="mb-1 text-xl font-semibold">Sign in</h1>
      <p className="mb-6 text-sm text-slate-600">With the email and password your administrator gave you.</p>
      {shell.kind === "unavailable" ? (
        <Notice title="Database unavailable" tone="error">
          The server cannot reach its database, so nobody can sign in right now. See{" "}
          <a className="underline" href="/api/health">
            /api/health
          </a>
          .
        </Notice>
      ) : (
        <SignInForm next={target} />
      )}
    </section>
  );
}
