"use client";

import { useState } from "react";

const TONES = {
  red: {
    button: "border-red-300 text-red-700 hover:bg-red-50",
    confirm: "border-red-300 bg-red-50 text-red-800 hover:bg-red-100",
  },
  slate: {
    button: "border-slate-300 text-slate-700 hover:bg-slate-100",
    confirm: "border-slate-400 bg-slate-100 text-slate-900 hover:bg-slate-200",
  },
} as const;

/**
 * An action that asks once more before it acts (removing a member, resetting their password,
 * deleting a secret): the first click shows the question, the second acts.
 */
export function ConfirmButton(props: {
  label: string;
  pendingLabel: string;
  testId: string;
  confirmTestId: string;
  question: string;
  tone: keyof typeof TONES;
  pending: boolean;
  onConfirm: () => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const tone = TONES[props.tone];
  if (!confirming || props.pending) {
    return (
      <button
        type="button"
        data-testid={props.testId}
        disabled={props.pending}
        onClick={() => setConfirming(true)}
        className={`whitespace-nowrap rounded border px-2 py-0.5 text-xs disabled:opacity-50 ${tone.button}`}
      >
        {props.pending ? props.pendingLabel : props.label}
      </button>
    );
  }
  return (
    <span className="inline-flex items-center gap-2 text-xs">
      <span className="max-w-56 text-right text-slate-600">{props.question}</span>
      <button
        type="button"
        data-testid={props.confirmTestId}
        onClick={() => {
          setConfirming(false);
          props.onConfirm();
        }}
        className={`whitespace-nowrap rounded border px-2 py-0.5 ${tone.confirm}`}
      >
        {props.label}
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
