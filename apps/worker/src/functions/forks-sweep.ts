import { commandCapWindow, commandIds, type RhumbatronConfig } from "@rhumbatron/core";
import { projectIdsWithRepository } from "@rhumbatron/db";
import { enqueueCommand, type Nudger, withTransaction } from "@rhumbatron/runtime";
import type { WorkerFunction } from "./types.ts";

/** The daily tick that sends forks.sweep for each project (one command per project and day). */
export function forksSweepTickFunction(config: RhumbatronConfig, nudger: Nudger): WorkerFunction {
  return {
    id: "forks-sweep-tick",
    triggers: { cron: config.source.forksSweepCron },
    retries: 3,
    async handler({ db, now }) {
      // A project still provisioning, or whose provisioning failed, has no canonical repository to read.
      const projects = await projectIdsWithRepository(db);
      const day = commandCapWindow(now());
      await withTransaction(db, async (ctx) => {
        for (const projectId of projects) {
          await enqueueCommand(
            ctx,
            { commandId: commandIds.forksSweep(projectId, day), commandType: "forks.sweep", projectId, payload: {} },
            { config, nudger, now },
          );
        }
      });
      return { projects: projects.length };
    },
  };
}
