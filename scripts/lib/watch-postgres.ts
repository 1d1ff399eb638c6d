import type { EmbeddedHandle } from "./database.ts";
import { runningPostmaster } from "./postmaster.ts";
import { managedChild } from "./processes.ts";
import { RESTART_POLICY, type RestartPolicy, restartLine } from "./restart-policy.ts";
import { Supervisor } from "./supervisor.ts";

/** How the log lines name it. */
export const EMBEDDED_POSTGRES = "the embedded Postgres";

/**
 * Watches the embedded Postgres this process started, as the web and worker processes are watched
 * (scripts/lib/supervisor.ts, the same restart policy): when its server process exits, one line says
 * so and it is started again in the same folder on the same port; past the policy's limit the
 * supervisor gives up and `npm start` stops. Only the server process this process spawned is
 * watched: if another one serves the folder by the time of a restart (an operator's `pg_ctl
 * restart`), it is left alone and no longer watched. Stopping it is stack.ts's (after web and
 * worker), so the supervisor's own stop leaves it running.
 */
export function watchEmbeddedPostgres(
  server: EmbeddedHandle,
  options: { log: (line: string) => void; policy?: RestartPolicy; now?: () => number },
): Supervisor {
  const policy = options.policy ?? RESTART_POLICY;
  let first = true;
  const restart = async () => {
    const other = runningPostmaster(server.pgDataDir);
    if (other !== null) {
      options.log(
        `${EMBEDDED_POSTGRES} was started again by another process (pid ${other}); it is left running and no longer restarted by Rhumbatron`,
      );
      return null;
    }
    const postmaster = await server.restart().catch((err: unknown) => {
      const why = err instanceof Error && err.message ? err.message : "the server exited during start-up";
      throw new Error(`${why} (its folder: ${server.pgDataDir})`);
    });
    return managedChild(EMBEDDED_POSTGRES, postmaster);
  };
  return new Supervisor(
    [
      {
        name: EMBEDDED_POSTGRES,
        start: () => {
          if (!first) return restart();
          first = false;
          return managedChild(EMBEDDED_POSTGRES, server.postmaster());
        },
        stop: async () => {},
        restartCleanExit: true,
      },
    ],
    {
      policy,
      ...(options.now ? { now: options.now } : {}),
      onRestarting: (e) => options.log(restartLine(e.name, e.reason, e, policy)),
    },
  );
}
