/**
 * The Windows SSH test's own vitest run (tools/windows/test-ssh-windows.sh, part of `make test-windows`): it needs
 * Wine and the programs that script builds, so it is not in the default suite's include.
 */
import { defineConfig } from "vitest/config";
import base from "../../vitest.config.js";

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["tools/windows/ssh-windows.e2e.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
