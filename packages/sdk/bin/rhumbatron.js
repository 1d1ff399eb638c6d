#!/usr/bin/env node
// The `rhumbatron` command. An installed package runs its build (dist/cli.js) with plain Node. In a
// checkout of this repository, where the TypeScript source sits beside this file (the published
// package holds no src/), it runs the source through tsx's loader instead, so `npx rhumbatron` there
// needs no build step and never runs a stale one.
import { existsSync } from "node:fs";

const source = new URL("../src/cli.ts", import.meta.url);
let cli;
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  cli = await import(source.href);
} else {
  cli = await import("../dist/cli.js");
}
process.exitCode = await cli.main(process.argv);
