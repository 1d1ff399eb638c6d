"use client";

import type { ReactNode } from "react";
import { SecretShownOnce } from "./secret-shown-once.tsx";

/**
 * A generated password shown to an admin once (a new member's, or a reset one), with the advice on
 * passing it on.
 */
export function TemporaryPassword({
  testId,
  passwordTestId,
  password,
  onDone,
  children,
}: {
  testId: string;
  passwordTestId: string;
  password: string;
  onDone: () => void;
  /** The sentence that says whose password this is. */
  children: ReactNode;
}) {
  return (
    <SecretShownOnce
      testId={testId}
      secretTestId={passwordTestId}
      secret={password}
      noun="password"
      onDone={onDone}
      advice="Share it safely: tell them directly or through a password manager, not in a shared channel, ticket or the same email as their address. Only its hash is stored, so nobody can look it up later. They can choose their own on their account page once signed in."
    >
      {children}
    </SecretShownOnce>
  );
}
