/**
 * `make test-wan`'s vitest run, inside the WAN rig (tools/wan/rig.sh): the files share one delay line whose profile
 * they switch, so they run one at a time. Not in the default suite's include: they need the rig.
 */
import { defineConfig } from "vitest/config";
import base from "../../vitest.config.js";

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["tools/wan/test/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
