import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  appOrigins,
  authSecret,
  configFromSettings,
  gitPublicUrl,
  parseSettings,
  type Settings,
} from "@rhumbatron/core";
import { blobStoreFromSettings, type SourceProbe } from "@rhumbatron/db";
import { pgNotifyNudger } from "@rhumbatron/runtime";
import { authPerDb } from "../auth.ts";
import { localCanonicalReader } from "../canonical-reader.ts";
import type { Services } from "../trpc.ts";

let cached: Settings | undefined;

/**
 * The test process's settings, parsed as the web server parses its own, but from the environment
 * the tests give them rather than the developer's shell: a RHUMBATRON_ENV=prod, an S3 blob store or
 * a public URL set there would change what every API test checks. The defaults, with a data folder
 * of the test process's own (the default, `.data`, is the checkout's, which `npm start` uses).
 */
export function testSettings(): Settings {
  cached ??= parseSettings({ RHUMBATRON_DATA_DIR: mkdtempSync(join(tmpdir(), "rh-api-test-")) });
  return cached;
}

/** better-auth for a test file's database client, configured from the test settings. */
export const authFor = authPerDb(testSettings);

/**
 * No Candidate fork holds any commit: tests have no source store on this machine (the real probes,
 * which read one, belong to the host that mounts the API: apps/web's server/source-probe.ts).
 */
const noForks: SourceProbe = { commitInCandidateFork: async () => false };

/**
 * Services as the web server builds them with the local executor, from the test settings: pg_notify
 * nudges, the configured blob store, the real better-auth. Tests replace parts (`now`, `blobs`) by
 * spreading this.
 */
export function testServices(): Services {
  const settings = testSettings();
  return {
    config: configFromSettings(settings),
    nudger: pgNotifyNudger,
    now: () => new Date(),
    sourceProbe: () => noForks,
    canonicalReader: (db) =>
      localCanonicalReader(db, configFromSettings(settings), settings.RHUMBATRON_DATA_DIR, () => new Date()),
    blobs: blobStoreFromSettings(settings),
    auth: authFor,
    gitPublicUrl: gitPublicUrl(settings),
    appOrigins: appOrigins(settings),
    credentialSecret: authSecret(settings),
  };
}
