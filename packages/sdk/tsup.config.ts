import { defineConfig } from "tsup";

// The published package (docs/cli.md, Using the SDK in another project): ESM JavaScript for Node 20+
// and one bundled declaration file.
export default defineConfig({
  entry: { index: "src/index.ts", cli: "src/cli.ts" },
  format: ["esm"],
  platform: "node",
  target: "node20",
  outDir: "dist",
  clean: true,
  tsconfig: "tsconfig.build.json",
  removeNodeProtocol: false,
  // core is a workspace package, not published: the parts the SDK uses are bundled in.
  noExternal: [/^@rhumbatron\//],
  // One declaration file for the package's one export, with the workspace types it names written
  // in (tsconfig.build.json maps them to their source; src/router.ts keeps the server's out).
  dts: {
    entry: { index: "src/index.ts" },
    resolve: [/^@rhumbatron\//, /^@prisma\/client\/runtime\//, /^@prisma\/client-runtime-utils/],
  },
});
