import { prettyFactory } from "pino-pretty";

/**
 * What `npm start` prints of its children's output (README.md, "Run it": `LOG_FORMAT`, `LOG_LEVEL`). The worker writes pino's JSON
 * lines; at a terminal they read as `14:31:02 INFO: run failed {…}`, one line each, unless
 * `LOG_FORMAT=json` asks for the JSON itself (for a log collector). The web app's routine chatter
 * (Turbopack's "Compiling…/Compiled…" and one line per request in dev) is shown only with
 * `LOG_LEVEL=debug`; its warnings, errors and "Ready" always show.
 */
export type LineFormat = (line: string) => string | null;

const pretty = prettyFactory({
  colorize: false,
  singleLine: true,
  translateTime: "HH:MM:ss",
  ignore: "pid,hostname,service",
});

export function workerLines(env: NodeJS.ProcessEnv): LineFormat {
  if ((env.LOG_FORMAT ?? "").toLowerCase() === "json") return (line) => line;
  return (line) => {
    if (!line.startsWith("{")) return line;
    try {
      JSON.parse(line);
    } catch {
      return line;
    }
    return pretty(line).trimEnd();
  };
}

/** Next's routine lines: compiling and compiled pages, and dev's request log. */
const WEB_CHATTER = [
  /^\s*○ Compiling\b/,
  /^\s*✓ Compiled\b/,
  /^\s*(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \/\S* \d{3} in /,
];

export function webLines(env: NodeJS.ProcessEnv): LineFormat {
  const level = (env.RHUMBATRON_LOG_LEVEL ?? env.LOG_LEVEL ?? "info").toLowerCase();
  if (level === "debug" || level === "trace") return (line) => line;
  return (line) => (WEB_CHATTER.some((re) => re.test(line)) ? null : line);
}
