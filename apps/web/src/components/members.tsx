"use client";

import { ROLE_ORDER } from "@rhumbatron/api/roles";
import type { Role } from "@rhumbatron/db";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { ConfirmButton } from "./confirm-button.tsx";
import { DataTable } from "./data-table.tsx";
import { Field, OptionSelect, SubmitButton, TextInput } from "./form-controls.tsx";
import { ActionError } from "./notice.tsx";
import { Empty, NotReady, Panel } from "./query-state.tsx";
import { TemporaryPassword } from "./temporary-password.tsx";

type Added = { email: string; temporaryPassword: string | null };
type Reset = { email: string; temporaryPassword: string; endedSessions: number };

/**
 * An admin's view of the tenant's members: add one (a new user's password shown once), change roles,
 * reset a password (shown once), remove. One generated password is on screen at a time.
 */
export function Members({ tenantId, currentUserId }: { tenantId: string; currentUserId: string }) {
  const [shown, setShown] = useState<{ added: Added } | { reset: Reset } | null>(null);
  return (
    <div className="space-y-6">
      <AddMember tenantId={tenantId} onAdded={(added) => setShown(added && { added })} />
      {shown && "added" in shown && <AddedNotice {...shown.added} onDone={() => setShown(null)} />}
      {shown && "reset" in shown && <ResetNotice {...shown.reset} onDone={() => setShown(null)} />}
      <MemberTable
        tenantId={tenantId}
        currentUserId={currentUserId}
        onReset={(reset) => setShown(reset && { reset })}
      />
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
  return (
    <Panel title="Add a member">
      <form data-testid="member-add-form" onSubmit={onSubmit} className="flex flex-wrap items-end gap-3">
        <Field label="Email">
          <TextInput
            data-testid="member-add-email"
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            required
            maxLength={254}
            placeholder="name@example.com"
            className="w-64"
          />
        </Field>
        <Field label="Name">
          <TextInput
            data-testid="member-add-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            maxLength={100}
            placeholder="Their full name"
            className="w-56"
          />
        </Field>
        <Field label="Role">
          <OptionSelect data-testid="member-add-role" options={ROLE_ORDER} value={role} onChange={setRole} />
        </Field>
        <SubmitButton testId="member-add-submit" pending={add.isPending} pendingLabel="Adding…">
          Add member
        </SubmitButton>
      </form>
      <p className="mt-2 text-xs text-slate-500">
        A new address gets an account with a temporary password, shown once below. Someone who already has an account
        keeps their own password.
      </p>
      {add.isError && (
        <ActionError testId="member-add-error" className="mt-3">
          {add.error.message}
        </ActionError>
      )}
    </Panel>
  );
}

function AddedNotice({ email, temporaryPassword, onDone }: Added & { onDone: () => void }) {
  if (temporaryPassword === null) {
    return (
      <div data-testid="member-added" className="rounded-lg border border-emerald-300 bg-emerald-50 p-4 text-sm">
        <p className="text-emerald-900">
          {email} already had an account and is now a member; they sign in with their own password.
        </p>
      </div>
    );
  }
  return (
    <TemporaryPassword
      testId="member-added"
      passwordTestId="member-temp-password"
      password={temporaryPassword}
      onDone={onDone}
    >
      {email} can now sign in with this temporary password.
    </TemporaryPassword>
  );
}

function ResetNotice({ email, temporaryPassword, endedSessions, onDone }: Reset & { onDone: () => void }) {
  const signedOut =
    endedSessions === 0
      ? ""
      : endedSessions === 1
        ? " One browser signed in as them was signed out."
        : ` ${endedSessions} browsers signed in as them were signed out.`;
  return (
    <TemporaryPassword
      testId="member-reset-result"
      passwordTestId="member-reset-temp-password"
      password={temporaryPassword}
      onDone={onDone}
    >
      {email}&apos;s old password no longer works; they sign in with this temporary one.{signedOut}
    </TemporaryPassword>
  );
}

function MemberTable({
  tenantId,
  currentUserId,
  onReset,
}: {
  tenantId: string;
  currentUserId: string;
  onReset: (reset: Reset | null) => void;
}) {
  const actions = useMemberActions(tenantId, currentUserId, onReset);
  const { members, setRole, remove, resetPassword } = actions;
  if (!members.isSuccess)
    return <NotReady query={members} testId="members-table" what="members" label="Loading members…" />;
  if (members.data.length === 0) return <Empty testId="members-table">No members yet</Empty>;
  const error = setRole.error ?? remove.error ?? resetPassword.error;
  return (
    <Panel title="Members">
      {error && (
        <ActionError testId="member-error" className="mb-3">
          {error.message}
        </ActionError>
      )}
      <DataTable testId="members-table" columns={["Name", "Email", "Role", "Joined", ""]}>
        {members.data.map((m) => (
          <MemberRow
            key={m.userId}
            m={m}
            tenantId={tenantId}
            currentUserId={currentUserId}
            onReset={onReset}
            actions={actions}
          />
        ))}
      </DataTable>
    </Panel>
  );
}

type MemberActions = ReturnType<typeof useMemberActions>;
type Member = NonNullable<MemberActions["members"]["data"]>[number];

/** The members list and what can be done to one member: change their role, reset their password, remove them. */
function useMemberActions(tenantId: string, currentUserId: string, onReset: (reset: Reset | null) => void) {
  const trpc = useTRPC();
  const router = useRouter();
  const invalidate = useInvalidateList(tenantId);
  const members = useQuery(trpc.members.list.queryOptions({ tenantId }));
  // Changing your own role or leaving changes what this page may show: re-render it from the server.
  const settled = (userId: string) => (userId === currentUserId ? router.refresh() : void invalidate());
  const setRole = useMutation(trpc.members.setRole.mutationOptions({ onSettled: (_d, _e, v) => settled(v.userId) }));
  const remove = useMutation(trpc.members.remove.mutationOptions({ onSettled: (_d, _e, v) => settled(v.userId) }));
  const resetPassword = useMutation(trpc.members.resetPassword.mutationOptions({ onSuccess: onReset }));
  // One error line for the table: the latest action's.
  const only = (keep: { reset: () => void }) => {
    for (const m of [setRole, remove, resetPassword]) if (m !== keep) m.reset();
  };
  return { members, setRole, remove, resetPassword, only };
}

/** One member's row: name, email, role, when they joined, and the buttons to reset or remove them. */
function MemberRow({
  m,
  tenantId,
  currentUserId,
  onReset,
  actions: { setRole, remove, resetPassword, only },
}: {
  m: Member;
  tenantId: string;
  currentUserId: string;
  onReset: (reset: Reset | null) => void;
  actions: MemberActions;
}) {
  return (
    <tr data-testid="member-row" data-email={m.email} data-role={m.role}>
      <td className="py-2 pr-3 font-medium">
        {m.name}
        {m.userId === currentUserId && <span className="ml-1 text-xs text-slate-500">(you)</span>}
      </td>
      <td className="py-2 pr-3 text-slate-600">{m.email}</td>
      <td className="py-2 pr-3">
        <OptionSelect
          data-testid="member-role-select"
          aria-label={`Role of ${m.email}`}
          compact
          options={ROLE_ORDER}
          value={m.role}
          disabled={setRole.isPending && setRole.variables?.userId === m.userId}
          onChange={(role) => {
            only(setRole);
            setRole.mutate({ tenantId, userId: m.userId, role });
          }}
        />
      </td>
      <td className="py-2 pr-3 text-slate-600">{m.joinedAt.toLocaleDateString()}</td>
      <td className="py-2">
        <div className="flex flex-wrap items-center justify-end gap-2">
          {m.userId !== currentUserId && (
            <ConfirmButton
              label="Reset password"
              pendingLabel="Resetting…"
              testId="member-reset-password"
              confirmTestId="member-reset-confirm"
              question={`Give ${m.email} a new temporary password and sign them out everywhere?`}
              tone="slate"
              pending={resetPassword.isPending && resetPassword.variables?.userId === m.userId}
              onConfirm={() => {
                only(resetPassword);
                onReset(null); // the previous password disappears before the next one is made
                resetPassword.mutate({ tenantId, userId: m.userId });
              }}
            />
          )}
          <ConfirmButton
            label="Remove"
            pendingLabel="Removing…"
            testId="member-remove"
            confirmTestId="member-remove-confirm"
            question={`Remove ${m.email} and revoke their API tokens here?`}
            tone="red"
            pending={remove.isPending && remove.variables?.userId === m.userId}
            onConfirm={() => {
              only(remove);
              remove.mutate({ tenantId, userId: m.userId });
            }}
          />
        </div>
      </td>
    </tr>
  );
}
