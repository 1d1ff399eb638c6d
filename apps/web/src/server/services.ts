import { codeStoreCanonicalReader, localCanonicalReader, type Services } from "@rhumbatron/api";
import { appOrigins, authSecret, gitPublicUrl } from "@rhumbatron/core";
import { authFor } from "./auth.ts";
import { serverBlobStore } from "./blobs.ts";
import { webNudger } from "./nudger.ts";
import { serverConfig, serverSettings } from "./settings.ts";
import { gitHttpSourceProbe, localSourceProbe } from "./source-probe.ts";

/** What the API's procedures need from this server, built from its settings (the tRPC route passes them in). */
export function defaultServices(): Services {
  const config = serverConfig();
  const settings = serverSettings();
  const now = () => new Date();
  // Repositories on another host: the worker's, split across hosts, or the source service's (scale-out).
  const remoteSource = settings.RHUMBATRON_FUNCTION_HOST === "split" || settings.RHUMBATRON_SOURCE_URL !== undefined;
  const gitUrl = settings.RHUMBATRON_SOURCE_URL
    ? `${settings.RHUMBATRON_SOURCE_URL.replace(/\/+$/, "")}/git`
    : gitPublicUrl(settings);
  return {
    config,
    nudger: webNudger(settings),
    now,
    // On one host the web reads the repositories itself; elsewhere it asks their git endpoint.
    sourceProbe: (db) =>
      remoteSource
        ? gitHttpSourceProbe(db, config, gitUrl, now)
        : localSourceProbe(db, config, settings.RHUMBATRON_DATA_DIR, now),
    // The canonical repositories are on this machine unless the worker runs on another host; then
    // the code store the worker publishes for each generation, in the shared blob store.
    canonicalReader: (db) =>
      remoteSource
        ? codeStoreCanonicalReader(db, serverBlobStore())
        : localCanonicalReader(db, config, settings.RHUMBATRON_DATA_DIR, now),
    blobs: serverBlobStore(),
    auth: authFor,
    gitPublicUrl: gitPublicUrl(settings),
    appOrigins: appOrigins(settings),
    credentialSecret: authSecret(settings),
  };
}
