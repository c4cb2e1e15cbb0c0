import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    alias: {
      // Before "@outpost/sdk", which would otherwise match the subpath as a prefix.
      "@outpost/sdk/protocol": here("./sdk/src/protocol.ts"),
      "@outpost/sdk": here("./sdk/src/index.ts"),
      "@outpost/spec/reference": here("./spec/src/reference/node-env.ts"),
      "@outpost/spec/conformance": here("./spec/src/conformance/index.ts"),
    },
  },
  test: {
    include: [
      "sdk/test/**/*.test.ts",
      "cli/test/**/*.test.ts",
      "spec/test/**/*.test.ts",
      "properties/**/*.test.ts",
      "integrations/*/test/**/*.test.ts",
      "tools/test/**/*.test.ts",
    ],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
