import type { ContextItem, ContextPacket } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import type { TxContext } from "../transaction.ts";

/**
 * Context Packets as recorded (docs/agents.md, Context Packets): one row per Agent run or conflict review,
 * written once. A run picked up again after its runner died gets the packet recorded the first
 * time, so what the model was told and what a finding may cite never change under one ID.
 */
type Store = Db | TxContext["tx"];

export async function recordContextPacket(
  db: Store,
  p: ContextPacket & { projectId: string; runId?: string | null; candidateId?: string | null },
): Promise<ContextPacket> {
  await db.contextPacket.createMany({
    data: [
      {
        id: p.id,
        projectId: p.projectId,
        purpose: p.purpose,
        runId: p.runId ?? null,
        candidateId: p.candidateId ?? null,
        tree: p.tree,
        indexSource: p.indexSource,
        note: p.note,
        items: p.items as unknown as Prisma.InputJsonValue,
        omitted: p.omitted as unknown as Prisma.InputJsonValue,
        budget: p.budget as unknown as Prisma.InputJsonValue,
      },
    ],
    skipDuplicates: true,
  });
  const stored = await contextPacketOf(db, p.id);
  if (!stored) throw new Error(`context packet ${p.id} was not recorded`);
  return stored;
}

export async function contextPacketOf(db: Store, id: string): Promise<ContextPacket | null> {
  const row = await db.contextPacket.findUnique({ where: { id } });
  return row ? packetFromRow(row) : null;
}

/** The packet an Agent run was given (null: none recorded, e.g. a run from before packets). */
export async function contextPacketOfRun(db: Store, runId: string): Promise<ContextPacket | null> {
  const row = await db.contextPacket.findUnique({ where: { runId } });
  return row ? packetFromRow(row) : null;
}

function packetFromRow(row: NonNullable<Awaited<ReturnType<Db["contextPacket"]["findUnique"]>>>): ContextPacket {
  return {
    id: row.id,
    purpose: row.purpose as ContextPacket["purpose"],
    tree: row.tree,
    indexSource: row.indexSource as ContextPacket["indexSource"],
    note: row.note,
    items: row.items as unknown as ContextItem[],
    omitted: row.omitted as unknown as ContextPacket["omitted"],
    budget: row.budget as unknown as ContextPacket["budget"],
  };
}
