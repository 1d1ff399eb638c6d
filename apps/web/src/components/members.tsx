"use client";

import type { Role } from "@rhumbatron/db";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { ROLE_ORDER } from "../server/roles.ts";
import { useTRPC } from "../trpc/client.tsx";
import { Empty, LoadError, Loading, Panel } from "./query-state.tsx";

type Added = { email: string; temporaryPassword: string | null };

/** An admin's view of the tenant's members: add one (a new user's password shown once), change roles, remove. */
export function Members({ tenantId, currentUserId }: { tenantId: string; currentUserId: string }) {
  const [added, setAdded] = useState<Added | null>(null);
  return (
    <div className="space-y-6">
      <AddMember tenantId={tenantId} onAdded={setAdded} />
      {added && <AddedNotice {...added} onDone={() => setAdded(null)} />}
      <MemberTable tenantId={tenantId} currentUserId={currentUserId} />
    </div>
  );
}

function useInvalidateList(tenantId: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.members.list.queryKey({ tenantId }) });
}

function AddMember({ tenantId, onAdded }: { tenantId: string; onAdded: (a: Added | null) => void }) {
  const trpc = useTRPC();
  const invalidate = useInvalidateList(tenantId);
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const add = useMutation(
    trpc.members.add.mutationOptions({
      onSuccess: (result) => {
        onAdded({ email: result.member.email, temporaryPassword: result.temporaryPassword });
        setEmail("");
        setName("");
        void invalidate();
      },
    }),
  );
  function onSubmit(event: FormEvent) {
    event.preventDefault();
    onAdded(null); // the previous password disappears before the next one is made
    add.mutate({ tenantId, email, name, role });
  }
  const input = "rounded border border-slate-300 px-3 py-1.5 text-sm";
  return (
    <Panel title="Add a member">
      <form data-testid="member-add-form" onSubmit={onSubmit} className="flex flex-wrap items-end gap-3">
        <label className="text-sm">
          <span className="mb-1 block font-medium">Email</span>
          <input
            data-testid="member-add-email"
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            required
            maxLength={254}
            placeholder="name@example.com"
            className={`w-64 ${input}`}
          />
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium">Name</span>
          <input
            data-testid="member-add-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            maxLength={100}
            placeholder="Their full name"
            className={`w-56 ${input}`}
          />
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium">Role</span>
          <select
            data-testid="member-add-role"
            value={role}
            onChange={(e) => setRole(e.target.value as Role)}
            className="rounded border border-slate-300 bg-white px-2 py-1.5 text-sm"
          >
            {ROLE_ORDER.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <button
          type="submit"
          data-testid="member-add-submit"
          disabled={add.isPending}
          className="rounded bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-60"
        >
          {add.isPending ? "Adding…" : "Add member"}
        </button>
      </form>
      <p className="mt-2 text-xs text-slate-500">
        A new address gets an account with a temporary password, shown once below. Someone who already has an account
        keeps their own password.
      </p>
      {add.isError && (
        <p role="alert" data-testid="member-add-error" className="mt-3 text-sm text-red-700">
          {add.error.message}
        </p>
      )}
    </Panel>
  );
}

function AddedNotice({ email, temporaryPassword, onDone }: Added & { onDone: () => void }) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);
  if (temporaryPassword === null) {
    return (
      <div data-testid="member-added" className="rounded-lg border border-emerald-300 bg-emerald-50 p-4 text-sm">
        <p className="text-emerald-900">
          {email} already had an account and is now a member; they sign in with their own password.
        </p>
      </div>
    );
  }
  async function copy() {
    try {
      await navigator.clipboard.writeText(temporaryPassword ?? "");
      setCopied("yes");
    } catch {
      setCopied("failed");
    }
  }
  return (
    <div data-testid="member-added" className="rounded-lg border border-emerald-300 bg-emerald-50 p-4 text-sm">
      <p className="font-medium text-emerald-900">
        {email} can now sign in with this temporary password. Copy it now: it is not shown again.
      </p>
      <div className="mt-2 flex items-center gap-2">
        <code
          data-testid="member-temp-password"
          className="min-w-0 flex-1 select-all truncate rounded border border-emerald-200 bg-white px-2 py-1 font-mono text-xs"
        >
          {temporaryPassword}
        </code>
        <button
          type="button"
          onClick={() => void copy()}
          className="rounded border border-emerald-400 bg-white px-2 py-1 text-emerald-800 hover:bg-emerald-100"
        >
          {copied === "yes" ? "Copied" : "Copy"}
        </button>
        <button type="button" onClick={onDone} className="px-2 py-1 text-emerald-800 hover:underline">
          Done
        </button>
      </div>
      <p className="mt-2 text-xs text-emerald-900">
        Share it safely: tell them directly or through a password manager, not in a shared channel, ticket or the same
        email as their address. Only its hash is stored, so nobody can look it up later.
      </p>
      {copied === "failed" && (
        <p role="alert" className="mt-2 text-xs text-red-700">
          The browser refused the clipboard; select the password and copy it by hand.
        </p>
      )}
    </div>
  );
}

function MemberTable({ tenantId, currentUserId }: { tenantId: string; currentUserId: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const invalidate = useInvalidateList(tenantId);
  const members = useQuery(trpc.members.list.queryOptions({ tenantId }));
  // Changing your own role or leaving changes what this page may show: re-render it from the server.
  const settled = (userId: string) => (userId === currentUserId ? router.refresh() : void invalidate());
  const setRole = useMutation(trpc.members.setRole.mutationOptions({ onSettled: (_d, _e, v) => settled(v.userId) }));
  const remove = useMutation(trpc.members.remove.mutationOptions({ onSettled: (_d, _e, v) => settled(v.userId) }));
  if (members.isPending) return <Loading testId="members-table" label="Loading members…" />;
  if (members.isError) {
    return (
      <LoadError
        testId="members-table"
        what="members"
        message={members.error.message}
        onRetry={() => void members.refetch()}
      />
    );
  }
  if (members.data.length === 0) return <Empty testId="members-table">No members yet</Empty>;
  const error = setRole.error ?? remove.error;
  return (
    <Panel title="Members">
      {error && (
        <p role="alert" data-testid="member-error" className="mb-3 text-sm text-red-700">
          {error.message}
        </p>
      )}
      <table data-testid="members-table" data-state="ready" className="w-full text-left text-sm">
        <thead className="text-xs uppercase text-slate-500">
          <tr>
            <th className="py-1 pr-3 font-medium">Name</th>
            <th className="py-1 pr-3 font-medium">Email</th>
            <th className="py-1 pr-3 font-medium">Role</th>
            <th className="py-1 pr-3 font-medium">Joined</th>
            <th className="py-1 font-medium" />
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {members.data.map((m) => (
            <tr key={m.userId} data-testid="member-row" data-email={m.email} data-role={m.role}>
              <td className="py-2 pr-3 font-medium">
                {m.name}
                {m.userId === currentUserId && <span className="ml-1 text-xs text-slate-500">(you)</span>}
              </td>
              <td className="py-2 pr-3 text-slate-600">{m.email}</td>
              <td className="py-2 pr-3">
                <select
                  data-testid="member-role-select"
                  aria-label={`Role of ${m.email}`}
                  value={m.role}
                  disabled={setRole.isPending && setRole.variables?.userId === m.userId}
                  onChange={(e) => {
                    remove.reset();
                    setRole.mutate({ tenantId, userId: m.userId, role: e.target.value as Role });
                  }}
                  className="rounded border border-slate-300 bg-white px-2 py-1 text-sm disabled:opacity-60"
                >
                  {ROLE_ORDER.map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </select>
              </td>
              <td className="py-2 pr-3 text-slate-600">{m.joinedAt.toLocaleDateString()}</td>
              <td className="py-2 text-right">
                <RemoveButton
                  email={m.email}
                  pending={remove.isPending && remove.variables?.userId === m.userId}
                  onConfirm={() => {
                    setRole.reset();
                    remove.mutate({ tenantId, userId: m.userId });
                  }}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Panel>
  );
}

/** Remove asks once more before it acts: the person loses the tenant and their API tokens for it. */
function RemoveButton({ email, pending, onConfirm }: { email: string; pending: boolean; onConfirm: () => void }) {
  const [confirming, setConfirming] = useState(false);
  if (!confirming) {
    return (
      <button
        type="button"
        data-testid="member-remove"
        onClick={() => setConfirming(true)}
        className="rounded border border-red-300 px-2 py-0.5 text-xs text-red-700 hover:bg-red-50"
      >
        Remove
      </button>
    );
  }
  return (
    <span className="inline-flex items-center gap-2 text-xs">
      <span className="text-slate-600">Remove {email} and revoke their API tokens here?</span>
      <button
        type="button"
        data-testid="member-remove-confirm"
        disabled={pending}
        onClick={onConfirm}
        className="rounded border border-red-300 bg-red-50 px-2 py-0.5 text-red-800 hover:bg-red-100 disabled:opacity-50"
      >
        {pending ? "Removing…" : "Remove"}
      </button>
      <button
        type="button"
        onClick={() => setConfirming(false)}
        className="rounded border border-slate-300 px-2 py-0.5 text-slate-700 hover:bg-slate-100"
      >
        Cancel
      </button>
    </span>
  );
}
