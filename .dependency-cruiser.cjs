/**
 * The import rules of the repository (ARCHITECTURE.md: The rooms), checked by `npm run lint` in CI;
 * scripts/dependency-rules.test.ts plants a violation of each rule and expects it reported.
 * Rooms, bottom up: packages/core (pure) <- packages/db <- packages/api <- packages/sdk; apps/*
 * wire packages together; e2e and scripts sit on top. An arrow may only point down.
 */
/** Test support: tests and the helpers only they use (`*.testing.ts`, `testing/`, `test-*.ts`). */
const TEST_SUPPORT = "(\\.test\\.tsx?$|\\.testing\\.ts$|/testing/|/testing\\.ts$|-testing\\.ts$|/test-[^/]+\\.ts$)";

/**
 * packages/db's areas (its folders under src/), bottom up. An area imports only areas of lower
 * layers, never a peer of its own layer; the files at src/ itself (client, transaction, migrate, …)
 * import no area, except index.ts, which exports them all. Tests and test support are exempt.
 */
const DB_LAYERS = [
  ["auth", "blob", "leases", "schema"],
  ["events"],
  ["queues"],
  ["work-graph"],
  ["release", "reviews", "sandbox"],
  ["queries"],
  ["commands"],
  ["source"],
  ["verification"],
  ["landing", "notifications", "webhooks"],
];
const dbArea = (areas) => `^packages/db/src/(${areas.join("|")})/`;
const DB_AREA_RULES = [
  {
    name: "db-areas-point-down",
    severity: "error",
    comment:
      "packages/db's own files at src/ (client, transaction, migrate, …) sit below every area; only index.ts gathers them.",
    from: { path: "^packages/db/src/[^/]+$", pathNot: `(^packages/db/src/index\\.ts$|${TEST_SUPPORT})` },
    to: { path: dbArea(DB_LAYERS.flat()) },
  },
  ...DB_LAYERS.map((layer, i) => ({
    name: "db-areas-point-down",
    severity: "error",
    comment: `packages/db area order (bottom up): ${DB_LAYERS.map((l) => l.join(", ")).join(" < ")}. An import points to a lower layer.`,
    from: { path: dbArea(layer), pathNot: TEST_SUPPORT },
    to: { path: dbArea(DB_LAYERS.slice(i).flat()), pathNot: "^packages/db/src/$1/" },
  })),
];

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "No file may reach itself through its imports.",
      from: { path: "^(packages|apps|scripts)/" },
      to: { circular: true },
    },
    {
      name: "packages-never-import-apps",
      severity: "error",
      comment: "Packages are the lower floor: an app mounts them, never the other way round.",
      from: { path: "^packages/" },
      to: { path: "^apps/" },
    },
    {
      name: "core-stays-pure",
      severity: "error",
      comment: "packages/core decides; it reads no database, no file and no clock of its own.",
      from: { path: "^packages/core/src/", pathNot: "\\.test\\.ts$" },
      to: { path: "^packages/(db|api|sdk)/" },
    },
    {
      name: "core-does-not-import-node-io",
      severity: "error",
      comment: "No file system, process or network module in core (its tests and their helpers, *.testing.ts, may).",
      from: { path: "^packages/core/src/", pathNot: "\\.(test|testing)\\.ts$" },
      to: { dependencyTypes: ["core"], path: "^(fs|child_process|net|http|https|fs/promises)$" },
    },
    {
      name: "db-below-api-and-sdk",
      severity: "error",
      from: { path: "^packages/db/" },
      to: { path: "^packages/(api|sdk)/" },
    },
    {
      name: "api-below-sdk",
      severity: "error",
      from: { path: "^packages/api/" },
      to: { path: "^packages/sdk/" },
    },
    {
      name: "sdk-takes-only-types-from-api",
      severity: "error",
      comment:
        "The SDK is shipped to users: it takes the AppRouter type, no server code (its tests may use the API's fixtures).",
      from: { path: "^packages/sdk/src/", pathNot: "(\\.test\\.ts$|/testing/)" },
      to: { path: "^packages/api/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "fixtures-are-test-support",
      severity: "error",
      comment:
        "packages/fixtures serves the vendored repositories and a local registry to tests, benches and e2e; product code never imports it, and it imports no product code.",
      from: { path: "^(packages|apps)/", pathNot: "(\\.test\\.ts$|^packages/fixtures/)" },
      to: { path: "^packages/fixtures/" },
    },
    {
      name: "product-code-never-imports-test-support",
      severity: "error",
      comment:
        "Test helpers (a package's testing/ entry, *.testing.ts, test-*.ts) serve tests; product code never imports them. Code only tests use is itself test support: name it so.",
      from: { path: "^(packages|apps)/", pathNot: TEST_SUPPORT },
      to: { path: TEST_SUPPORT },
    },
    {
      name: "sdk-does-not-import-db",
      severity: "error",
      comment:
        "The SDK talks to the product over HTTP; only its tests and their helpers (testing/) may set up a database.",
      from: { path: "^packages/sdk/", pathNot: "(\\.test\\.ts$|/testing/)" },
      to: { path: "^packages/db/" },
    },
    {
      name: "worker-imports-core-and-db",
      severity: "error",
      comment:
        "The worker records every state change through packages/db; it never reaches into the API, the SDK or the web app.",
      from: { path: "^apps/worker/" },
      to: { path: "^(packages/(api|sdk)|apps/web)/" },
    },
    {
      name: "web-takes-only-the-workers-nudger-and-registry",
      severity: "error",
      comment:
        "The web app mounts core, db and the API; of the worker it takes only the nudger and (split hosting) its function registry, the worker's index. It does not use the SDK.",
      from: { path: "^apps/web/" },
      to: { path: "^(packages/sdk|apps/worker)/", pathNot: "^apps/worker/src/(index|nudger)\\.ts$" },
    },
    {
      name: "fixtures-stand-alone",
      severity: "error",
      from: { path: "^packages/fixtures/" },
      to: { path: "^(packages/(core|db|api|sdk)|apps)/" },
    },
    {
      name: "e2e-uses-public-surfaces",
      severity: "error",
      comment:
        "e2e drives the product from outside: HTTP, the SDK, the CLI, git over HTTP, the browser, and documented operator commands and scripts run as processes (scripts/stack-server.ts starts the product). Of our code it imports core, the SDK and the test fixtures.",
      from: { path: "^e2e/" },
      to: { path: "^(apps|scripts|packages/(db|api))/" },
    },
    {
      name: "scripts-do-not-import-e2e",
      severity: "error",
      from: { path: "^scripts/" },
      to: { path: "^e2e/" },
    },
    ...DB_AREA_RULES,
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|\\.next|generated|\\.data|dist)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs"],
    },
  },
};
