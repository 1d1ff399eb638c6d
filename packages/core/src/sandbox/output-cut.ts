/**
 * The line a Sandbox puts where it cut a stream that passed its output cap (apps/worker/src/sandbox/
 * run-capped.ts keeps the first and the last half); `OUTPUT_CUT_LINE` recognises it, so a reader of
 * the output (verification/failure-excerpt.ts) knows where lines are missing.
 */
export const outputCutLine = (cutBytes: number, capBytes: number) =>
  `… ${cutBytes} bytes cut (output cap ${capBytes} bytes) …`;
export const OUTPUT_CUT_LINE = /^… \d+ bytes cut \(output cap \d+ bytes\) …$/;
