import { z } from "zod";

/** The Command envelope (docs/protocol.md, Commands and queues): a request for work, carried on a queue. */
export const COMMAND_TYPES = [
  "agent.wake",
  "change.dispatch",
  "candidate.create",
  "candidate.land",
  "forks.sweep",
  "project.provision",
  "project.cleanup",
  "fixture.publish",
  "index.build",
  "index.purge",
  "verification.start",
  "release.start",
  "webhook.deliver",
] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

export const commandEnvelopeSchema = z.object({
  commandId: z.string().regex(/^cmd_[A-Za-z0-9_-]+$/),
  commandType: z.string().min(1),
  projectId: z.string().min(1),
  changeId: z.string().min(1).nullable(),
  taskId: z.string().min(1).nullable(),
  attempt: z.number().int().nonnegative(),
  createdAt: z.iso.datetime(),
  deadline: z.iso.datetime().nullable(),
  payload: z.record(z.string(), z.unknown()),
});
export type CommandEnvelope = z.infer<typeof commandEnvelopeSchema>;
