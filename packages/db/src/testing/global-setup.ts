import type { TestProject } from "vitest/node";
import { startTestServer } from "./server.ts";

import "./provided.ts";

/** Vitest global setup: one Postgres server and one migrated template for the whole run. */
export default async function setup(project: TestProject) {
  const server = await startTestServer();
  project.provide("pgAdminUrl", server.adminUrl);
  project.provide("pgTemplate", server.template);
  return async () => {
    await server.stop();
  };
}
