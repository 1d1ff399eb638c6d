import { createCallerFactory, mergeRouters, router } from "../trpc.ts";
import { candidatesRouter } from "./candidates.ts";
import { changesRouter, tasksRouter } from "./changes.ts";
import { landingRouter } from "./landing.ts";
import { membersRouter } from "./members.ts";
import { metricsRouter } from "./metrics.ts";
import { notificationsRouter } from "./notifications.ts";
import { operationsRouter } from "./operations.ts";
import { policyRouter } from "./policy.ts";
import { projectChecksRouter } from "./project-checks.ts";
import { projectsRouter } from "./projects.ts";
import { sandboxRouter } from "./sandbox.ts";
import { secretsRouter } from "./secrets.ts";
import { tenantsRouter } from "./tenants.ts";
import { testsRouter } from "./tests.ts";
import { tokensRouter } from "./tokens.ts";
import { webhooksRouter } from "./webhooks.ts";

/** The public API: one sub-router per resource. */
export const appRouter = router({
  tenants: tenantsRouter,
  projects: mergeRouters(projectsRouter, projectChecksRouter),
  operations: operationsRouter,
  change: changesRouter,
  task: tasksRouter,
  candidate: candidatesRouter,
  tokens: tokensRouter,
  members: membersRouter,
  metrics: metricsRouter,
  sandbox: sandboxRouter,
  secrets: secretsRouter,
  landing: landingRouter,
  policy: policyRouter,
  notifications: notificationsRouter,
  webhooks: webhooksRouter,
  tests: testsRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);
