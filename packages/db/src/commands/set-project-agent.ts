import { isDeepStrictEqual } from "node:util";
import { type AgentChoice, agentChoiceSchema, DomainError } from "@rhumbatron/core";
import type { Db } from "../client.ts";
import { Prisma } from "../generated/prisma/client.ts";

export interface SetProjectAgentResult {
  projectId: string;
  /** The project's default Agent now; null: the worker's default. */
  agent: AgentChoice | null;
  /** False when the project already had this choice: nothing was written. */
  changed: boolean;
}

/**
 * Sets the Agent that works the project's Tasks unless a Task names its own (projects.agent; core
 * agents/choice.ts). Runs already started keep the Agent they started with. Idempotent: the same
 * choice again writes nothing. Another tenant's project is NOT_FOUND; an archived one is refused.
 */
export async function setProjectAgent(
  db: Db,
  p: { tenantId: string; projectId: string; agent: AgentChoice | null },
): Promise<SetProjectAgentResult> {
  const parsed = p.agent === null ? null : agentChoiceSchema.safeParse(p.agent);
  if (parsed && !parsed.success) {
    throw new DomainError(
      "INVALID_INPUT",
      parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
    );
  }
  const agent = parsed ? parsed.data : null;
  const project = await db.project.findFirst({
    where: { id: p.projectId, tenantId: p.tenantId },
    select: { status: true, agent: true },
  });
  if (!project) throw new DomainError("NOT_FOUND", `project ${p.projectId} not found`);
  if (project.status === "archived") {
    throw new DomainError("PRECONDITION_FAILED", "the project is archived: no Task of it will run again");
  }
  if (isDeepStrictEqual(project.agent ?? null, agent)) return { projectId: p.projectId, agent, changed: false };
  await db.project.updateMany({
    where: { id: p.projectId, tenantId: p.tenantId },
    data: { agent: agent ?? Prisma.DbNull },
  });
  return { projectId: p.projectId, agent, changed: true };
}
