/**
 * What a consumer does with a batch once it has tried to apply it (docs/protocol.md, Consumers):
 * all applied -> ack; otherwise count the failure; below the limit -> nack (redeliver later);
 * at the limit -> dead-letter the batch, mark its events processed, and ack.
 */
export type BatchOutcome = "ack" | "nack" | "dead_letter";

export function decideBatchOutcome(allApplied: boolean, failuresIncludingThis: number, limit: number): BatchOutcome {
  if (allApplied) return "ack";
  return failuresIncludingThis >= limit ? "dead_letter" : "nack";
}

/** A batch is keyed by its stream and first offset, which stay the same on every redelivery. */
export function batchKey(stream: number, firstOffset: bigint | number): string {
  return `stream-${String(stream).padStart(2, "0")}@${firstOffset.toString()}`;
}
