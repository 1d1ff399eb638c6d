// One way to find and start system Chromium, shared with the worker's browser check.
export {
  CHROMIUM_ARGS,
  CHROMIUM_CANDIDATES,
  CHROMIUM_INSTALL_HINT,
  findChromium,
} from "../../apps/worker/src/verification/chromium.ts";
