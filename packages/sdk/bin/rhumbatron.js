#!/usr/bin/env node
// The `rhumbatron` command: runs the TypeScript CLI (src/cli.ts) through tsx's loader in this
// process, so there is no build step and `npx rhumbatron` works right after `npm install`.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli.ts");
process.exitCode = await main(process.argv);
