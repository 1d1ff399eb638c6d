import { configFromSettings, parseSettings, type RhumbatronConfig, type Settings } from "@rhumbatron/core";

/**
 * The web server's settings and typed config, parsed from process.env on first use (not at import,
 * so `next build` can load route modules without a configured environment). A bad value throws
 * DomainError INVALID_CONFIG naming the variable.
 */
let cached: { settings: Settings; config: RhumbatronConfig } | undefined;

function load() {
  if (!cached) {
    const settings = parseSettings(process.env);
    // The environment's numbers with the deployment's Sandbox budget (RHUMBATRON_SANDBOX_MONTHLY_SECONDS).
    cached = { settings, config: configFromSettings(settings) };
  }
  return cached;
}

export function serverSettings(): Settings {
  return load().settings;
}

export function serverConfig(): RhumbatronConfig {
  return load().config;
}
