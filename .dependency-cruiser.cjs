/**
 * The import rules of the repository (ARCHITECTURE.md: The rooms), checked by `npm run lint` in CI;
 * scripts/dependency-rules.test.ts plants a violation of each rule and expects it reported.
 * Rooms, bottom up: packages/core (pure) <- packages/runtime <- packages/db <- packages/api <- packages/sdk; apps/*
 * wire packages together; e2e and scripts sit on top. An arrow may only point down.
 */
/** Test support: tests and the helpers only they use (`*.testing.ts`, `testing/`, `test-*.ts`). */
const TEST_SUPPORT = "(\\.test\\.tsx?$|\\.testing\\.ts$|/testing/|/testing\\.ts$|-testing\\.ts$|/test-[^/]+\\.ts$)";

/**
 * A package's areas (its folders under src/), bottom up. An area imports only areas of lower
 * layers, never a peer of its own layer; the files at src/ itself (client, transaction, sql, …)
 * import no area, except index.ts, which exports them all. Tests and test support are exempt.
 */
const DB_LAYERS = [
  ["auth", "blob", "schema", "statuses"],
  ["events"],
  ["queues"],
  ["work-graph"],
  ["release", "reviews", "sandbox"],
  ["queries"],
  ["commands"],
  ["source"],
  ["verification"],
  ["landing", "notifications", "webhooks"],
  ["backup"],
];
const RUNTIME_LAYERS = [["leases"], ["events", "queues"]];

function areaRules(pkg, layers) {
  const area = (areas) => `^packages/${pkg}/src/(${areas.join("|")})/`;
  const name = `${pkg}-areas-point-down`;
  return [
    {
      name,
      severity: "error",
      comment: `packages/${pkg}'s own files at src/ sit below every area; only index.ts gathers them.`,
      from: { path: `^packages/${pkg}/src/[^/]+$`, pathNot: `(^packages/${pkg}/src/index\\.ts$|${TEST_SUPPORT})` },
      to: { path: area(layers.flat()) },
    },
    ...layers.map((layer, i) => ({
      name,
      severity: "error",
      comment: `packages/${pkg} area order (bottom up): ${layers.map((l) => l.join(", ")).join(" < ")}. An import points to a lower layer.`,
      from: { path: area(layer), pathNot: TEST_SUPPORT },
      to: { path: area(layers.slice(i).flat()), pathNot: `^packages/${pkg}/src/$1/` },
    })),
  ];
}
const AREA_RULES = [...areaRules("runtime", RUNTIME_LAYERS), ...areaRules("db", DB_LAYERS)];

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
      to: { path: "^packages/(runtime|db|api|sdk)/" },
    },
    {
      name: "core-does-not-import-node-io",
      severity: "error",
      comment: "No file system, process or network module in core (its tests and their helpers, *.testing.ts, may).",
      from: { path: "^packages/core/src/", pathNot: "\\.(test|testing)\\.ts$" },
      to: { dependencyTypes: ["core"], path: "^(fs|child_process|net|http|https|fs/promises)$" },
    },
    {
      name: "runtime-knows-no-domain",
      severity: "error",
      comment:
        "packages/runtime is the message system on Postgres (outbox, streams, queues, leases, transactions): it imports core and nothing else of ours (its tests may set up the product's database).",
      from: { path: "^packages/runtime/src/", pathNot: TEST_SUPPORT },
      to: { path: "^(packages/(db|api|sdk|fixtures)|apps)/" },
    },
    {
      name: "db-front-door",
      severity: "error",
      comment:
        "Outside packages/db, the database is reached through db's index only (domain functions and read models): no deep import of its files, none of its Prisma client, and no Prisma package. Test support may use db's testing entry; the runtime takes only the SQL template tag of Prisma's runtime (runtime/src/sql.ts).",
      from: {
        path: "^(apps|packages/(api|sdk|runtime|core)|scripts|e2e)/",
        pathNot: `${TEST_SUPPORT}|^packages/runtime/src/sql\\.ts$`,
      },
      to: { path: "(^packages/db/src/|^node_modules/@prisma/)", pathNot: "^packages/db/src/index\\.ts$" },
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
      to: { path: "^packages/(db|runtime)/" },
    },
    {
      name: "worker-imports-core-and-db",
      severity: "error",
      comment:
        "The worker records every state change through packages/db (and runs the runtime's queues and streams); it never reaches into the API, the SDK or the web app.",
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
      to: { path: "^(apps|scripts|packages/(runtime|db|api))/" },
    },
    {
      name: "scripts-do-not-import-e2e",
      severity: "error",
      from: { path: "^scripts/" },
      to: { path: "^e2e/" },
    },
    ...AREA_RULES,
  ],
  options: {
    // The generated Prisma client stays in the graph (db-front-door sees an import of it) but is not followed.
    doNotFollow: { path: "(node_modules|/generated/)" },
    exclude: { path: "(^|/)(\\.next|\\.data|dist)/|^node_modules/(?!@prisma/)" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs"],
    },
  },
};
